/* sbx-run end to end: real programs (coreutils, python3, sqlite3, tar,
 * gzip, dash, and sbx_run_probe) run under the sbx-run binary of the
 * build ($SBX_BUILD_DIR/sbx-run). Each refusal is paired with the same
 * operation succeeding - allowed by an option, or outside the sandbox. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <termios.h>
#include <unistd.h>
#include <pty.h>
#include <pwd.h>

#include <glib.h>
#include <json-glib/json-glib.h>

#include "sandbox/kernel/seccomp/loader.h"
#include "sandbox/tests/runner/tool_run.h"

/* ---- exit status and signals -------------------------------------------- */

START_TEST(sbx_run_returns_the_programs_exit_status) {
  const char *t[] = {"/bin/true", NULL};
  result r = sbx_run(NULL, t);
  ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
  ck_assert_str_eq(r.err, "");
  result_clear(&r);
  const char *f[] = {"/bin/false", NULL};
  expect(sbx_run(NULL, f), 1, NULL, NULL);
  const char *s[] = {"/bin/sh", "-c", "exit 3", NULL};
  expect(sbx_run(NULL, s), 3, NULL, NULL);
}
END_TEST

START_TEST(sbx_run_reports_a_program_killed_by_sigterm_as_143) {
  g_autofree char *probe = probe_path();
  const char *outside[] = {probe, "selfkill", "15", NULL};
  result r = run(outside);
  ck_assert_int_eq(r.status, 143);
  result_clear(&r);
  expect(sbx_run(NULL, outside), 143, NULL, NULL);
  const char *sh[] = {"/bin/sh", "-c", "kill -TERM $$", NULL};
  expect(sbx_run(NULL, sh), 143, NULL, NULL);
}
END_TEST

/* Starts sbx-run -- probe wait, waits for "ready", sends sig to sbx-run
 * and returns the exit status. */
static int status_after_signal(int sig) {
  g_autofree char *bin = sbx_run_path();
  g_autofree char *probe = probe_path();
  int p[2];
  ck_assert_int_eq(pipe(p), 0);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    dup2(p[1], 1);
    close(p[0]);
    execl(bin, bin, "--", probe, "wait", (char *)NULL);
    _exit(98);
  }
  close(p[1]);
  char buf[16] = {0};
  ck_assert_int_gt(read(p[0], buf, sizeof(buf) - 1), 0);
  ck_assert_str_eq(buf, "ready\n");
  ck_assert_int_eq(kill(pid, sig), 0);
  int st;
  ck_assert_int_eq(waitpid(pid, &st, 0), pid);
  close(p[0]);
  ck_assert(WIFEXITED(st));
  return WEXITSTATUS(st);
}

START_TEST(sbx_run_forwards_sigterm_and_sigint_to_the_program) {
  ck_assert_int_eq(status_after_signal(SIGTERM), 128 + SIGTERM);
  ck_assert_int_eq(status_after_signal(SIGINT), 128 + SIGINT);
  ck_assert_int_eq(status_after_signal(SIGHUP), 128 + SIGHUP);
}
END_TEST

/* ---- the end of a run ------------------------------------------------- */

/* Leaves behind a process detached twice over (a session of its own, its
 * parent gone) that ignores the signals a terminal sends and holds an
 * exclusive lock on argv[1] until it dies; prints its pid once it holds
 * the lock. */
static const char leave_a_lock_holder[] =
    "import fcntl, os, signal, sys\n"
    "r, w = os.pipe()\n"
    "if os.fork() == 0:\n"
    "  os.setsid()\n"
    "  if os.fork() == 0:\n"
    "    for s in (signal.SIGHUP, signal.SIGINT, signal.SIGTERM):\n"
    "      signal.signal(s, signal.SIG_IGN)\n"
    "    fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)\n"
    "    fcntl.flock(fd, fcntl.LOCK_EX)\n"
    "    null = os.open('/dev/null', os.O_RDWR)\n"
    "    for i in range(3):\n"
    "      os.dup2(null, i)\n"
    "    os.write(w, str(os.getpid()).encode())\n"
    "    os.close(w)\n"
    "    while True:\n"
    "      signal.pause()\n"
    "  os._exit(0)\n"
    "os.close(w)\n"
    "print(os.read(r, 32).decode())\n";

/* Whether a process holds the lock on path: the lock is let go only when
 * its holder has died. */
static bool lock_is_held(const char *path) {
  int fd = open(path, O_RDWR | O_CLOEXEC);
  ck_assert_int_ge(fd, 0);
  bool held = flock(fd, LOCK_EX | LOCK_NB) != 0;
  ck_assert(!held || errno == EWOULDBLOCK);
  close(fd);
  return held;
}

/* When sbx-run returns, nothing the program started still runs, however
 * it detached: outside (the control) the same process outlives the
 * program that started it. */
START_TEST(nothing_the_program_started_runs_after_sbx_run_returns) {
  g_autofree char *dir = make_dir("left");
  g_autofree char *lock_outside = path_in("left/outside");
  g_autofree char *lock_inside = path_in("left/inside");
  const char *outside[] = {"/usr/bin/python3", "-c", leave_a_lock_holder,
                           lock_outside, NULL};
  result r = run(outside);
  ck_assert_int_eq(r.status, 0);
  pid_t holder = (pid_t)atoi(r.out);
  result_clear(&r);
  ck_assert_int_gt(holder, 1);
  ck_assert(lock_is_held(lock_outside));
  ck_assert_int_eq(kill(holder, SIGKILL), 0);

  const char *inside[] = {"/usr/bin/python3", "-c", leave_a_lock_holder,
                          lock_inside, NULL};
  const char *opts[] = {"-w", dir, "-r", "/usr/lib/python3.11", NULL};
  r = sbx_run(opts, inside);
  ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
  ck_assert_int_gt(atoi(r.out), 1);
  result_clear(&r);
  ck_assert(!lock_is_held(lock_inside));
}
END_TEST

START_TEST(sbx_run_exits_127_for_a_missing_program_and_126_for_a_file) {
  g_autofree char *missing = path_in("no-such-program");
  const char *m[] = {missing, NULL};
  result r = sbx_run(NULL, m);
  ck_assert_int_eq(r.status, 127);
  result_clear(&r);
  g_autofree char *text = make_file("not-executable", "just text\n");
  const char *n[] = {text, NULL};
  expect(sbx_run(NULL, n), 126, NULL, NULL);

  /* A FIFO named as the program, or as a script's interpreter, is not
   * opened to be read (which would wait for a writer): its exec fails as
   * it does outside (the control). */
  g_autofree char *fifo = path_in("fifo-program");
  ck_assert_int_eq(mkfifo(fifo, 0755), 0);
  ck_assert_int_eq(chmod(fifo, 0755), 0);
  g_autofree char *script_text = g_strdup_printf("#!%s\n", fifo);
  g_autofree char *script = make_file("fifo-script", script_text);
  ck_assert_int_eq(chmod(script, 0755), 0);
  const char *const names[] = {fifo, script};
  for (size_t i = 0; i < G_N_ELEMENTS(names); i++) {
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
      execl(names[i], names[i], (char *)NULL);
      _exit(errno == EACCES ? 126 : 1);
    }
    int st;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 126);
    const char *cmd[] = {names[i], NULL};
    r = sbx_run(NULL, cmd);
    ck_assert_msg(r.status == 126, "status %d: %s", r.status, r.err);
    g_autofree char *line =
        g_strdup_printf("cannot execute %s: Permission denied", names[i]);
    assert_contains(r.err, line);
    result_clear(&r);
  }
}
END_TEST

/* ---- real programs ------------------------------------------------------ */

START_TEST(ls_lists_an_allowed_directory_but_not_a_forbidden_one) {
  g_autofree char *dir = make_dir("listing");
  g_autofree char *marker = make_file("listing/marker-file", "x");
  const char *ls[] = {"/bin/ls", dir, NULL};
  result r = run(ls);
  ck_assert_int_eq(r.status, 0);
  assert_contains(r.out, "marker-file");
  result_clear(&r);

  const char *allow[] = {"--allow-read", dir, NULL};
  expect(sbx_run(allow, ls), 0, "marker-file", NULL);

  r = sbx_run(NULL, ls);
  ck_assert_int_eq(r.status, 2);
  assert_lacks(r.out, "marker-file");
  g_autofree char *line = g_strdup_printf("sbx: denied stat %s", dir);
  expect_denial_line(&r, line);
  if (!sbx_run_kernel_decides())
    assert_contains(r.err, "(allow with --allow-read ");
  result_clear(&r);
}
END_TEST

/* A socket file and a FIFO in a grant have attributes like any file:
 * `ls -l` reads their extended attributes and file systems as it stats
 * them, and neither opens for reading (ENXIO, a wait for a writer). A
 * file outside the grants keeps its attributes to itself. */
START_TEST(attributes_of_sockets_and_fifos_are_read_like_their_stat) {
  g_autofree char *dir = make_dir("attrs");
  g_autofree char *file = make_file("attrs/file", "x");
  g_autofree char *canary = make_file("attrs-canary", "x");
  ck_assert_int_eq(setxattr(file, "user.sbx", "1", 1, 0), 0);
  ck_assert_int_eq(setxattr(canary, "user.sbx", "1", 1, 0), 0);
  g_autofree char *fifo = path_in("attrs/fifo");
  ck_assert_int_eq(mkfifo(fifo, 0644), 0);
  g_autofree char *sock = path_in("attrs/sock");
  int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  g_strlcpy(sa.sun_path, sock, sizeof(sa.sun_path));
  ck_assert_int_eq(bind(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
  close(s);
  const char *script =
      "import os, sys\n"
      "for p in sys.argv[2:]:\n"
      "    print(os.path.basename(p), os.listxattr(p),\n"
      "          os.statvfs(p).f_bsize > 0)\n"
      "print('value', os.getxattr(sys.argv[1], 'user.sbx'))\n";
  const char *cmd[] = {
      "/usr/bin/python3", "-c", script, file, file, fifo, sock, NULL};
  const char *want =
      "file ['user.sbx'] True\nfifo [] True\n"
      "sock [] True\nvalue b'1'\n";
  expect(run(cmd), 0, want, NULL);
  const char *allow[] = {"-r", "/usr/lib/python3.11", "-r", dir, NULL};
  expect(sbx_run(allow, cmd), 0, want, NULL);
  const char *outside[] = {"/usr/bin/python3", "-c", script, canary, NULL};
  expect(run(outside), 0, "value b'1'\n", NULL);
  result r = sbx_run(allow, outside);
  ck_assert_int_eq(r.status, 1);
  assert_lacks(r.out, "value");
  result_clear(&r);
}
END_TEST

/* A directory the program opens is one of its own mounts in both modes:
 * after fchdir to it (as the JVM restores its working directory, and
 * programs that save theirs), getcwd names it. */
/* A directory a grant only shows (the one above a granted file) has its
 * attribute names, security labels and ACLs looked at as its stat is,
 * as the kernel needs no read permission for them (ls -l asks); a
 * user.* attribute's value needs read. */
START_TEST(attributes_a_stat_shows_need_no_read_grant) {
  g_autofree char *dir = make_dir("shown");
  g_autofree char *file = make_file("shown/file", "x");
  g_autofree char *script = g_strdup_printf(
      "import os\n"
      "d = '%s'\n"
      "print('list', len(os.listxattr(d)) >= 0)\n"
      "for n in ('system.posix_acl_access', 'security.selinux', "
      "'user.sbx'):\n"
      "  try:\n"
      "    os.getxattr(d, n); print(n, 'value')\n"
      "  except OSError as e:\n"
      "    print(n, e.errno)\n",
      dir);
  const char *py[] = {"/usr/bin/python3", "-c", script, NULL};
  const char *opts[] = {"--explain",    "--allow-read",        file,
                        "--allow-read", "/usr/lib/python3.11", NULL};
  result r = sbx_run(opts, py);
  ck_assert_msg(r.status == 0, "status %d: %s%s", r.status, r.out, r.err);
  assert_contains(r.out, "list True\n");
  assert_contains(r.out, "system.posix_acl_access 61\n");
  assert_contains(r.out, "security.selinux 61\n");
  assert_contains(r.out, "user.sbx 13\n");
  g_autofree char *refused = g_strdup_printf("sbx: denied getxattr %s", dir);
  assert_contains(r.err, refused);
  g_autofree char *listed = g_strdup_printf("sbx: denied listxattr %s", dir);
  assert_lacks(r.err, listed);
  result_clear(&r);
  /* With read, the user.* one is the file system's answer (ENODATA, or
   * EOPNOTSUPP where it keeps no user attributes). */
  const char *ro[] = {"--explain",    "--allow-read",        dir,
                      "--allow-read", "/usr/lib/python3.11", NULL};
  r = sbx_run(ro, py);
  ck_assert_msg(r.status == 0, "status %d: %s%s", r.status, r.out, r.err);
  assert_contains(r.out, "user.sbx ");
  assert_lacks(r.out, "user.sbx 13\n");
  assert_lacks(r.err, "sbx: denied getxattr");
  result_clear(&r);
}
END_TEST

START_TEST(fchdir_to_an_opened_directory_leaves_a_working_directory_named) {
  g_autofree char *dir = make_dir("workdir");
  const char *script =
      "import os, sys\n"
      "fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY)\n"
      "os.chdir('/usr')\n"
      "os.fchdir(fd)\n"
      "print('cwd', os.getcwd())\n";
  const char *cmd[] = {"/usr/bin/python3", "-c", script, dir, NULL};
  g_autofree char *want = g_strdup_printf("cwd %s\n", dir);
  expect(run(cmd), 0, want, NULL);
  const char *opts[] = {"-r", "/usr/lib/python3.11", "-r", dir, NULL};
  expect(sbx_run(opts, cmd), 0, want, NULL);
}
END_TEST

START_TEST(python_reads_an_allowed_file_but_not_etc_shadow_or_a_canary) {
  g_autofree char *data = make_file("data.txt", "sandboxed hello");
  g_autofree char *canary = make_file("canary.txt", "canary");
  g_autofree char *read_data =
      g_strdup_printf("print(open('%s').read())", data);
  g_autofree char *read_canary =
      g_strdup_printf("print(open('%s').read())", canary);
  const char *py_data[] = {"/usr/bin/python3", "-c", read_data, NULL};
  const char *py_canary[] = {"/usr/bin/python3", "-c", read_canary, NULL};
  const char *py_shadow[] = {"/usr/bin/python3", "-c",
                             "print(open('/etc/shadow').read())", NULL};
  const char *opts[] = {"--allow-read", "/usr/lib/python3.11", "--allow-read",
                        data, NULL};

  result r = run(py_canary);
  ck_assert_int_eq(r.status, 0);
  assert_contains(r.out, "canary");
  result_clear(&r);

  expect(sbx_run(opts, py_data), 0, "sandboxed hello", NULL);

  /* Names outside the grants are absent, from the default mode's tree
   * and for the supervisor alike. */
  r = sbx_run(opts, py_canary);
  ck_assert_int_eq(r.status, 1);
  assert_contains(r.err, "FileNotFoundError");
  g_autofree char *line = g_strdup_printf("sbx: denied open %s", canary);
  expect_denial_line(&r, line);
  assert_lacks(r.out, "canary");
  result_clear(&r);

  r = sbx_run(opts, py_shadow);
  ck_assert_int_eq(r.status, 1);
  assert_contains(r.err, "FileNotFoundError");
  expect_denial_line(&r,
                     "sbx: denied open /etc/shadow "
                     "(allow with --allow-read /etc/shadow)");
  result_clear(&r);
}
END_TEST

/* A program looking for a file along a search path (perl's @INC, gcc's
 * include directories, a configuration file in several places) goes on
 * when a name is missing and stops at any other error. A directory
 * outside the grants is missing for it in both modes, whether the name
 * exists there or not, so the search reaches the granted directory. */
START_TEST(a_search_path_goes_on_past_names_outside_the_grants) {
  g_autofree char *hidden = make_dir("search-hidden");
  g_autofree char *absent = path_in("search-absent");
  g_autofree char *granted = make_dir("search-granted");
  g_autofree char *f1 = make_file("search-hidden/mod.conf", "hidden");
  g_autofree char *f2 = make_file("search-granted/mod.conf", "granted");
  g_autofree char *script = g_strdup_printf(
      "import sys\n"
      "for d in ['%s', '%s', '%s']:\n"
      "  try:\n"
      "    print(open(d + '/mod.conf').read()); sys.exit(0)\n"
      "  except FileNotFoundError:\n"
      "    continue\n"
      "  except OSError as e:\n"
      "    print('stopped', e.errno); sys.exit(1)\n"
      "sys.exit(2)\n",
      absent, hidden, granted);
  const char *py[] = {"/usr/bin/python3", "-c", script, NULL};
  /* Control: outside the sandbox the search stops at the hidden one. */
  expect(run(py), 0, "hidden", NULL);
  const char *opts[] = {"--allow-read", "/usr/lib/python3.11", "--allow-read",
                        granted, NULL};
  result r = sbx_run(opts, py);
  ck_assert_msg(r.status == 0, "status %d: %s%s", r.status, r.out, r.err);
  assert_contains(r.out, "granted");
  assert_lacks(r.out, "hidden");
  result_clear(&r);
  const char *explain[] = {
      "--explain",    "--allow-read", "/usr/lib/python3.11",
      "--allow-read", granted,        NULL};
  r = sbx_run(explain, py);
  ck_assert_msg(r.status == 0, "status %d: %s%s", r.status, r.out, r.err);
  assert_contains(r.out, "granted");
  g_autofree char *line = g_strdup_printf("sbx: denied open %s", f1);
  assert_contains(r.err, line);
  result_clear(&r);
}
END_TEST

START_TEST(sqlite_creates_a_database_only_in_an_allowed_writable_directory) {
  g_autofree char *dir = make_dir("db");
  g_autofree char *db = path_in("db/test.sqlite");
  const char *sql[] = {"/usr/bin/sqlite3", db,
                       "create table t(x); insert into t values(42); "
                       "select x from t;",
                       NULL};
  const char *opts[] = {"--allow-write", dir, NULL};
  result r = sbx_run(opts, sql);
  ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
  ck_assert_str_eq(r.out, "42\n");
  ck_assert_int_eq(access(db, F_OK), 0);
  result_clear(&r);

  g_autofree char *dir2 = make_dir("db2");
  g_autofree char *db2 = path_in("db2/test.sqlite");
  sql[1] = db2;
  const char *ro[] = {"--allow-read", dir2, NULL};
  r = sbx_run(ro, sql);
  ck_assert_int_ne(r.status, 0);
  ck_assert_int_eq(access(db2, F_OK), -1);
  g_autofree char *line = g_strdup_printf("sbx: denied open %s", db2);
  expect_denial_line(&r, line);
  g_autofree char *hint =
      g_strdup_printf("(allow with --allow-write %s)", dir2);
  if (!sbx_run_kernel_decides())
    assert_contains(r.err, hint);
  result_clear(&r);
}
END_TEST

START_TEST(tar_and_gzip_round_trip_in_a_writable_directory) {
  g_autofree char *work = make_dir("work");
  g_autofree char *src = make_dir("work/src");
  g_autofree char *f1 = make_file("work/src/one.txt", "first file\n");
  g_autofree char *f2 = make_file("work/src/two.txt", "second file\n");
  g_autofree char *archive = path_in("work/src.tar");
  g_autofree char *gz = path_in("work/src.tar.gz");
  g_autofree char *out = make_dir("work/out");
  const char *w[] = {"--allow-write", work, NULL};

  const char *tar_c[] = {"/usr/bin/tar", "cf",  archive, "-C",
                         work,           "src", NULL};
  result r = sbx_run(w, tar_c);
  ck_assert_msg(r.status == 0, "tar c: %d: %s", r.status, r.err);
  result_clear(&r);
  const char *gzip[] = {"/usr/bin/gzip", archive, NULL};
  r = sbx_run(w, gzip);
  ck_assert_msg(r.status == 0, "gzip: %d: %s", r.status, r.err);
  ck_assert_int_eq(access(gz, F_OK), 0);
  ck_assert_int_eq(access(archive, F_OK), -1);
  result_clear(&r);
  const char *gunzip[] = {"/usr/bin/gzip", "-d", gz, NULL};
  r = sbx_run(w, gunzip);
  ck_assert_msg(r.status == 0, "gzip -d: %d: %s", r.status, r.err);
  result_clear(&r);
  const char *tar_x[] = {"/usr/bin/tar", "xf", archive, "-C", out, NULL};
  r = sbx_run(w, tar_x);
  ck_assert_msg(r.status == 0, "tar x: %d: %s", r.status, r.err);
  result_clear(&r);
  g_autofree char *one = g_build_filename(out, "src", "one.txt", NULL);
  g_autofree char *two = g_build_filename(out, "src", "two.txt", NULL);
  g_autofree char *d1 = NULL, *d2 = NULL;
  ck_assert(g_file_get_contents(one, &d1, NULL, NULL));
  ck_assert(g_file_get_contents(two, &d2, NULL, NULL));
  ck_assert_str_eq(d1, "first file\n");
  ck_assert_str_eq(d2, "second file\n");

  /* Refused: the archive would go to a directory that is only readable. */
  g_autofree char *ro = make_dir("readonly");
  g_autofree char *denied = path_in("readonly/src.tar");
  const char *opts[] = {"--allow-read", work, "--allow-read", ro, NULL};
  tar_c[2] = denied;
  r = sbx_run(opts, tar_c);
  ck_assert_int_ne(r.status, 0);
  ck_assert_int_eq(access(denied, F_OK), -1);
  expect_denial_line(&r, "sbx: denied open");
  result_clear(&r);
}
END_TEST

START_TEST(a_shell_script_runs_other_programs_only_with_allow_exec) {
  g_autofree char *dir = make_dir("script");
  g_autofree char *data = make_file("script/data", "from cat\n");
  g_autofree char *script = make_file("script/run.sh",
                                      "#!/bin/sh\necho script-started\n"
                                      "/bin/cat \"$1\"\n");
  ck_assert_int_eq(chmod(script, 0755), 0);
  const char *cmd[] = {script, data, NULL};
  result r = run(cmd);
  ck_assert_int_eq(r.status, 0);
  assert_contains(r.out, "from cat");
  result_clear(&r);

  const char *with[] = {"--allow-exec", "--allow-read", dir, NULL};
  r = sbx_run(with, cmd);
  ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
  assert_contains(r.out, "script-started");
  assert_contains(r.out, "from cat");
  result_clear(&r);

  const char *without[] = {"--allow-read", dir, NULL};
  r = sbx_run(without, cmd);
  ck_assert_int_ne(r.status, 0);
  assert_contains(r.out, "script-started");
  assert_lacks(r.out, "from cat");
  expect_denial_line(&r, "sbx: denied exec /bin/cat (allow with --allow-exec)");
  result_clear(&r);
}
END_TEST

/* With --allow-exec, a file the grants do not let the program read does
 * not run and is not there, as any name outside the grants (the default
 * mode's tree does not hold it; the supervisor answers ENOENT where
 * Landlock's EXECUTE right, which follows the read grants, would say
 * EACCES), and under --explain the refusal
 * is named with the read grant that lifts it, as valgrind's and
 * git's helpers outside /usr/bin need; a name that is not there is the
 * kernel's ENOENT, with no line. The same exec runs outside (control)
 * and with the grant the line names. */
START_TEST(an_exec_outside_the_read_grants_is_named_with_the_grant_it_needs) {
  g_autofree char *dir = make_dir("helpers");
  g_autofree char *tool = path_in("helpers/tool");
  g_autofree char *missing = path_in("helpers/none");
  gchar *text = NULL;
  gsize len = 0;
  ck_assert(g_file_get_contents("/bin/true", &text, &len, NULL));
  ck_assert(g_file_set_contents(tool, text, (gssize)len, NULL));
  g_free(text);
  ck_assert_int_eq(chmod(tool, 0755), 0);
  g_autofree char *script = g_strdup_printf(
      "%s; echo tool=$?; %s; echo none=$?; exit 3", tool, missing);
  const char *sh[] = {"/bin/sh", "-c", script, NULL};
  expect(run(sh), 3, "tool=0\nnone=127\n", NULL);
  const char *x[] = {"--allow-exec", NULL};
  result r = sbx_run(x, sh);
  ck_assert_msg(r.status == 3, "status %d: %s", r.status, r.err);
  /* The default mode's root holds no name the grants do not show, and
   * the supervisor answers as it does: not there. */
  ck_assert_str_eq(r.out, "tool=127\nnone=127\n");
  g_autofree char *line = g_strdup_printf(
      "sbx: denied exec %s (allow with --allow-read %s)", tool, tool);
  expect_denial_line(&r, line);
  g_autofree char *none = g_strdup_printf("denied exec %s", missing);
  assert_lacks(r.err, none);
  result_clear(&r);
  const char *granted[] = {"--allow-exec", "--allow-read", tool, NULL};
  expect(sbx_run(granted, sh), 3, "tool=0\nnone=127\n", NULL);
}
END_TEST

/* Debian's alternatives: /usr/bin/awk -> /etc/alternatives/awk -> mawk. A
 * link is followed only where its name may be seen, and --allow-exec lets
 * the program see those names. */
START_TEST(
    a_program_found_through_the_alternatives_system_runs_with_allow_exec) {
  g_autofree char *target = g_file_read_link("/etc/alternatives/awk", NULL);
  if (!target) {
    printf("note: no /etc/alternatives/awk on this host; skipped\n");
    return;
  }
  const char *cmd[] = {"/bin/sh", "-c", "echo one two | awk '{print $2}'",
                       NULL};
  result r = run(cmd); /* control */
  ck_assert_int_eq(r.status, 0);
  assert_contains(r.out, "two");
  result_clear(&r);
  const char *with[] = {"--allow-exec", NULL};
  r = sbx_run(with, cmd);
  ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
  assert_contains(r.out, "two");
  result_clear(&r);
}
END_TEST

/* ---- S30: flipping the path never yields the canary --------------------- */

START_TEST(a_path_flipped_during_100k_opens_never_opens_the_canary) {
  g_autofree char *allowed = make_file("allowed-file", "allowed");
  g_autofree char *canary = make_file("canary-file", "canary!");
  struct stat st;
  ck_assert_int_eq(stat(canary, &st), 0);
  g_autofree char *ino = g_strdup_printf("%llu", (unsigned long long)st.st_ino);
  g_autofree char *probe = probe_path();

  /* Positive control: without the supervisor the flip is real. It is a
   * race of the kernel's scheduling: on a loaded machine one round may
   * miss it, so the control gets a few. */
  const char *control[] = {probe, "race", allowed, canary, ino, "20000", NULL};
  result r = run(control);
  for (int round = 1; r.status != 1 && round < 5; round++) {
    result_clear(&r);
    r = run(control);
  }
  ck_assert_int_eq(r.status, 1);
  assert_lacks(r.out, "canary=0\n");
  result_clear(&r);

  const char *race[] = {probe, "race", allowed, canary, ino, "100000", NULL};
  const char *opts[] = {"--allow-read", allowed, NULL};
  r = sbx_run(opts, race);
  ck_assert_msg(r.status == 0, "status %d: %s\n%s", r.status, r.out, r.err);
  assert_contains(r.out, "canary=0\n");
  assert_lacks(r.out, "opened=0\n");
  assert_lacks(r.out, "refused=0\n");
  result_clear(&r);
}
END_TEST

/* ---- S32: no supervisor, no program -------------------------------------- */

static const struct sock_filter listener_filter[] = {
    /* Every call allowed; tuxcall (never used) notifies. What matters is
     * the listener: the kernel allows one per filter chain. */
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 184, 0, 1),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
};

START_TEST(the_program_never_runs_when_the_supervisor_cannot_start) {
  g_autofree char *dir = make_dir("s32");
  g_autofree char *marker = path_in("s32/marker");
  g_autofree char *probe = probe_path();
  g_autofree char *bin = sbx_run_path();
  const char *argv[] = {bin,   "--allow-write", dir,    "--",
                        probe, "write",         marker, NULL};

  /* Positive control: the same command line makes the marker. */
  result r = run(argv);
  ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
  ck_assert_int_eq(access(marker, F_OK), 0);
  ck_assert_int_eq(unlink(marker), 0);
  result_clear(&r);

  /* Under a filter that already has a listener, sbx-run's cannot be
   * installed: setup fails and the program is never started. */
  g_autofree char *err_path = path_in(".s32-stderr");
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    int err = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(err, 2);
    int l = sbx_seccomp_load_raw(listener_filter, G_N_ELEMENTS(listener_filter),
                                 SBX_SECCOMP_NEW_LISTENER);
    /* Kept open across exec: closing the last listener fd detaches it,
     * and then the kernel would accept another. */
    if (l < 0 || fcntl(l, F_DUPFD, 10) < 0)
      _exit(97);
    execv(bin, (char *const *)argv);
    _exit(98);
  }
  int st;
  ck_assert_int_eq(waitpid(pid, &st, 0), pid);
  ck_assert(WIFEXITED(st));
  ck_assert_int_eq(WEXITSTATUS(st), 125);
  ck_assert_int_eq(access(marker, F_OK), -1);
  g_autofree char *err = NULL;
  ck_assert(g_file_get_contents(err_path, &err, NULL, NULL));
  assert_contains(err, "listener");
  assert_contains(err, "the program was not started");
}
END_TEST

/* ---- S10: the terminal --------------------------------------------------- */

static int open_pty(int *slave) {
  int master = posix_openpt(O_RDWR | O_NOCTTY);
  ck_assert_int_ge(master, 0);
  ck_assert_int_eq(grantpt(master), 0);
  ck_assert_int_eq(unlockpt(master), 0);
  *slave = open(ptsname(master), O_RDWR | O_NOCTTY);
  ck_assert_int_ge(*slave, 0);
  return master;
}

static bool pty_has_input(int master) {
  int fl = fcntl(master, F_GETFL);
  fcntl(master, F_SETFL, fl | O_NONBLOCK);
  char c;
  usleep(20000);
  ssize_t n = read(master, &c, 1);
  return n == 1;
}

START_TEST(tiocsti_cannot_type_into_the_terminal_the_program_was_given) {
  g_autofree char *probe = probe_path();
  const char *cmd[] = {probe, "tiocsti", NULL};

  /* Positive control: outside, the probe makes the pty its controlling
   * terminal and pushes a character into it. */
  int slave;
  int master = open_pty(&slave);
  result r = run_fd(cmd, slave);
  assert_contains(r.out, "tiocsti=ok");
  assert_contains(r.out, "tiocsetd=ok");
  ck_assert(pty_has_input(master));
  result_clear(&r);
  close(master);
  close(slave);

  master = open_pty(&slave);
  g_autofree char *bin = sbx_run_path();
  /* The program's terminal is this test's pty: sbx-run by hand, with
   * the pass's mode. */
  const char *explained[] = {bin, "--explain", "--", probe, "tiocsti", NULL};
  const char *plain[] = {bin, "--", probe, "tiocsti", NULL};
  r = run_fd(sbx_run_explaining() ? explained : plain, slave);
  assert_contains(r.out, "tiocsti=Operation not permitted");
  assert_contains(r.out, "tiocsti_junk=Operation not permitted");
  assert_contains(r.out, "tiocsetd=Operation not permitted");
  assert_contains(r.out, "tiocgwinsz=ok");
  expect_denial_line(&r, "sbx: denied syscall ioctl TIOCSTI");
  expect_denial_line(&r, "sbx: denied syscall ioctl TIOCSETD");
  ck_assert(!pty_has_input(master));
  result_clear(&r);
  close(master);
  close(slave);
}
END_TEST

START_TEST(the_program_runs_in_a_new_session) {
  g_autofree char *probe = probe_path();
  const char *cmd[] = {probe, "session", NULL};
  result r = sbx_run(NULL, cmd);
  ck_assert_int_eq(r.status, 0);
  /* init (pid 1 of the sandbox) leads the session; the program is pid 2. */
  assert_contains(r.out, "pid=2\n");
  assert_contains(r.out, "sid=1\n");
  result_clear(&r);
}
END_TEST

/* ---- S18: sockets -------------------------------------------------------- */

START_TEST(socket_af_inet_is_the_sandboxs_own_or_refused_without_net) {
  g_autofree char *probe = probe_path();
  const char *cmd[] = {probe, "socket-inet", NULL};
  result r = run(cmd);
  ck_assert_int_eq(r.status, 0);
  result_clear(&r);
  const char *net[] = {"--net", NULL};
  expect(sbx_run(net, cmd), 0, NULL, NULL);
  r = sbx_run(NULL, cmd);
  if (sbx_run_has_own_network()) {
    /* Both modes make the socket in a network namespace of the
     * sandbox's own, whose loopback alone it reaches
     * (sbx_run_escape_test). */
    ck_assert_msg(r.status == 0, "status %d: %s%s", r.status, r.out, r.err);
  } else {
    ck_assert_int_eq(r.status, 1);
    assert_contains(r.out, "errno=13\n");
    assert_contains(r.err, "sbx: denied socket AF_INET (allow with --net)");
  }
  result_clear(&r);
  /* Datagram pairs are refused with the network too (sbx_run_escape_test
   * has the reason); the unsandboxed control makes one. */
  const char *pair[] = {probe, "socketpair-dgram", NULL};
  expect(run(pair), 0, NULL, NULL);
  expect(sbx_run(NULL, pair), 1, "errno=13\n", NULL);
  r = sbx_run(net, pair);
  ck_assert_int_eq(r.status, 1);
  assert_contains(r.out, "errno=13\n");
  expect_denial_line(&r, "sbx: denied socketpair AF_UNIX type 2");
  result_clear(&r);
}
END_TEST

START_TEST(an_abstract_unix_socket_outside_is_unreachable_with_or_without_net) {
  g_autofree char *name =
      g_strdup_printf("sbx-run-test-%d-%u", (int)getpid(), g_random_int());
  int srv = socket(AF_UNIX, SOCK_STREAM, 0);
  ck_assert_int_ge(srv, 0);
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  memcpy(sa.sun_path + 1, name, strlen(name));
  socklen_t len =
      (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(name));
  ck_assert_int_eq(bind(srv, (struct sockaddr *)&sa, len), 0);
  ck_assert_int_eq(listen(srv, 8), 0);
  g_autofree char *probe = probe_path();
  const char *cmd[] = {probe, "connect-abstract", name, NULL};

  result r = run(cmd);
  ck_assert_int_eq(r.status, 0);
  result_clear(&r);
  r = sbx_run(NULL, cmd);
  ck_assert_int_eq(r.status, 1);
  assert_lacks(r.out, "connect=ok");
  result_clear(&r);
  /* With the network the name would be the host's: refused by name. */
  const char *net[] = {"--net", NULL};
  r = sbx_run(net, cmd);
  ck_assert_int_eq(r.status, 1);
  assert_contains(r.out, "errno=1\n");
  g_autofree char *line = g_strdup_printf("sbx: denied connect @%s", name);
  assert_contains(r.err, line);
  result_clear(&r);
  close(srv);
}
END_TEST

/* ---- S33: privilege state ------------------------------------------------ */

START_TEST(the_program_has_no_capabilities_and_no_new_privs) {
  g_autofree char *probe = probe_path();
  const char *cmd[] = {probe, "creds", NULL};
  /* Positive control: outside, at least the bounding set is full. */
  result r = run(cmd);
  ck_assert_int_eq(r.status, 1);
  assert_lacks(r.out, "bounding=0\n");
  result_clear(&r);
  r = sbx_run(NULL, cmd);
  ck_assert_msg(r.status == 0, "status %d: %s\n%s", r.status, r.out, r.err);
  assert_contains(r.out, "effective=0\n");
  assert_contains(r.out, "permitted=0\n");
  assert_contains(r.out, "inheritable=0\n");
  assert_contains(r.out, "bounding=0\n");
  assert_contains(r.out, "ambient=0\n");
  assert_contains(r.out, "no_new_privs=1\n");
  g_autofree char *uid = g_strdup_printf("uid=%u\n", (unsigned)geteuid());
  assert_contains(r.out, uid);
  result_clear(&r);
}
END_TEST

/* The caller's identity with no capability: root's overrides are gone,
 * for the program and for the supervisor that opens files for it. */
START_TEST(the_program_keeps_the_callers_identity_without_overrides) {
  g_autofree char *f = make_file("private", "owner only");
  g_autofree char *probe = probe_path();
  const char *cmd[] = {probe, "read", f, NULL};
  const char *ro[] = {"--allow-read", f, NULL};
  ck_assert_int_eq(chmod(f, 0), 0);
  if (geteuid() == 0) {
    /* Control: root outside reads a file no mode bit lets it read. */
    expect(run(cmd), 0, "data=owner only", NULL);
  }
  /* Inside, the rules allow it and the file system refuses it. */
  result r = sbx_run(ro, cmd);
  ck_assert_int_eq(r.status, 1);
  assert_contains(r.out, "errno=13\n");
  assert_lacks(r.err, "sbx: denied");
  result_clear(&r);
  ck_assert_int_eq(chmod(f, 0400), 0);
  expect(sbx_run(ro, cmd), 0, "data=owner only", NULL);
}
END_TEST

START_TEST(user_chooses_another_identity_and_only_root_may) {
  g_autofree char *probe = probe_path();
  const char *cmd[] = {probe, "creds", NULL};
  g_autofree char *self = g_strdup_printf("%u", (unsigned)geteuid());
  g_autofree char *self_line = g_strdup_printf("uid=%s\n", self);
  const char *as_self[] = {"--user", self, NULL};
  expect(sbx_run(as_self, cmd), 0, self_line, NULL);
  if (geteuid() == 0) {
    const char *by_name[] = {"--user", "nobody", NULL};
    expect(sbx_run(by_name, cmd), 0, "uid=65534\n", NULL);
    const char *by_number[] = {"--user", "4321", NULL};
    expect(sbx_run(by_number, cmd), 0, "uid=4321\n", NULL);
  } else {
    const char *root[] = {"--user", "0", NULL};
    expect(sbx_run(root, cmd), 125, NULL,
           "only root can run the program as another user");
  }
  const char *unknown[] = {"--user", "no-such-user-here", NULL};
  expect(sbx_run(unknown, cmd), 125, NULL, "no such user");
}
END_TEST

/* A host account the program must not learn of: neither the caller nor
 * the overflow user. */
static struct passwd *another_account(void) {
  struct passwd *pw;
  setpwent();
  while ((pw = getpwent()) != NULL)
    if (pw->pw_uid != geteuid() && pw->pw_uid != 65534)
      break;
  endpwent();
  return pw;
}

/* The program's /etc/passwd and /etc/group name its own user and group
 * and the overflow ones every other owner appears as, never the host's
 * other accounts, and show one link each; a grant of the host's /etc
 * shows the host's files instead. Neither kind can be written through. */
START_TEST(the_program_sees_its_own_accounts_and_no_others) {
  struct passwd *me = getpwuid(geteuid());
  ck_assert_ptr_nonnull(me);
  g_autofree char *me_line =
      g_strdup_printf("%s:x:%u:", me->pw_name, (unsigned)me->pw_uid);
  g_autofree char *me_name = g_strdup_printf("%s\n", me->pw_name);
  struct passwd *other = another_account();
  ck_assert_ptr_nonnull(other);
  g_autofree char *other_line =
      g_strdup_printf("%s:x:%u:", other->pw_name, (unsigned)other->pw_uid);
  const char *cat[] = {"/bin/cat", "/etc/passwd", "/etc/group", NULL};
  const char *id[] = {"/usr/bin/id", "-un", NULL};
  const char *none[] = {NULL};
  /* Control: outside, the host's file names the other account. */
  expect(run(cat), 0, other_line, NULL);

  result r = sbx_run(none, cat);
  ck_assert_int_eq(r.status, 0);
  assert_contains(r.out, me_line);
  assert_contains(r.out, "nobody:x:65534:");
  assert_contains(r.out, "nogroup:x:65534:\n");
  assert_lacks(r.out, other_line);
  assert_lacks(r.err, "sbx: denied");
  result_clear(&r);
  expect(sbx_run(none, id), 0, me_name, NULL);

  /* Read-only, as the rest of the root: the same errno in both modes. */
  const char *write[] = {"/bin/sh", "-c",
                         "echo x >> /etc/passwd; echo open=$?; "
                         "touch /etc/group; echo touch=$?",
                         NULL};
  const char *x[] = {"--allow-exec", NULL};
  r = sbx_run(x, write);
  assert_contains(r.out, "open=2\n");
  assert_contains(r.out, "touch=1\n");
  assert_contains(r.err, "Permission denied");
  result_clear(&r);

  /* One link, by name and through a descriptor, as a file of the tree
   * (a memory file under the supervisor has none of its own). */
  const char *links[] = {"/bin/sh", "-c",
                         "stat -c %h /etc/passwd; exec 3</etc/group; "
                         "stat -L -c %h /proc/self/fd/3",
                         NULL};
  expect(run(links), 0, "1\n", NULL);
  expect(sbx_run(x, links), 0, "1\n1\n", NULL);

  /* A grant of the host's /etc: the host's own files. */
  const char *etc[] = {"--allow-read", "/etc", NULL};
  expect(sbx_run(etc, cat), 0, other_line, NULL);
}
END_TEST

/* A time zone named in TZ is libc's to read, as the locale files are:
 * without it libc falls back to UTC without a word. */
START_TEST(a_time_zone_named_in_tz_is_read_without_a_grant) {
  const char *outside[] = {"/usr/bin/env", "TZ=Europe/Paris", "/bin/date", "-d",
                           "@0",           "+%Z %H",          NULL};
  result r = run(outside);
  ck_assert_int_eq(r.status, 0);
  ck_assert_str_eq(r.out, "CET 01\n");
  result_clear(&r);
  const char *cmd[] = {"/bin/date", "-d", "@0", "+%Z %H", NULL};
  const char *tz[] = {"--setenv", "TZ=Europe/Paris", NULL};
  expect(sbx_run(tz, cmd), 0, "CET 01\n", NULL);
}
END_TEST

/* localhost and the sandbox's own hostname resolve with no grant (a test
 * server's client, Java's InetAddress.getLocalHost()), from an
 * /etc/hosts that names only the loopback; a grant of the host's file
 * shows it instead. */
START_TEST(localhost_and_the_sandboxs_hostname_resolve) {
  const char *sh[] = {"/bin/sh", "-c",
                      "getent hosts localhost >/dev/null && echo localhost-ok; "
                      "getent hosts \"$(hostname)\" >/dev/null && "
                      "echo own-name-ok; cat /etc/hosts /etc/nsswitch.conf",
                      NULL};
  /* Control: outside, the host's file answers. */
  expect(run(sh), 0, "localhost-ok\n", NULL);
  const char *x[] = {"--allow-exec", NULL};
  result r = sbx_run(x, sh);
  ck_assert_msg(r.status == 0, "status %d: %s%s", r.status, r.out, r.err);
  assert_contains(r.out,
                  "localhost-ok\nown-name-ok\n127.0.0.1\tlocalhost\n"
                  "127.0.1.1\t");
  assert_contains(r.out, "\n::1\tlocalhost ip6-localhost ip6-loopback\n");
  /* Every lookup goes to the files made for it. */
  assert_contains(r.out, "passwd: files\ngroup: files\n");
  assert_contains(r.out, "hosts: files dns\n");
  if (sbx_run_kernel_decides())
    assert_lacks(r.err, "sbx: denied");
  result_clear(&r);
  g_autofree char *host_text = NULL;
  ck_assert(g_file_get_contents("/etc/hosts", &host_text, NULL, NULL));
  const char *cat[] = {"/bin/cat", "/etc/hosts", NULL};
  const char *granted[] = {"--allow-read", "/etc/hosts", NULL};
  expect(sbx_run(granted, cat), 0, host_text, NULL);
  /* With the host's file the sandbox is named as the host, which that
   * file resolves: the sandbox's own name is in no file the program
   * reads, and would fall through to DNS. The own name resolves from the
   * file inside wherever it does outside (the control). */
  const char *own_name[] = {"/bin/sh", "-c",
                            "hostname; getent -s files hosts \"$(hostname)\" "
                            ">/dev/null && echo own-name-ok",
                            NULL};
  r = run(own_name);
  int resolves = r.status;
  ck_assert_int_eq(resolves == 0, strstr(r.out, "own-name-ok") != NULL);
  result_clear(&r);
  g_autofree char *expected = g_strdup_printf(
      "%s\n%s", g_get_host_name(), resolves == 0 ? "own-name-ok\n" : "");
  const char *hosts_x[] = {"--allow-read", "/etc/hosts", "--allow-exec", NULL};
  r = sbx_run(hosts_x, own_name);
  ck_assert_msg(r.status == resolves, "status %d: %s%s", r.status, r.out,
                r.err);
  ck_assert_str_eq(r.out, expected);
  result_clear(&r);
}
END_TEST

/* ---- options --------------------------------------------------------------
 */

START_TEST(the_audit_file_holds_one_json_object_per_decision) {
  g_autofree char *audit = path_in("audit.jsonl");
  g_autofree char *data = make_file("audited", "x");
  g_autofree char *canary = make_file("not-allowed", "y");
  g_autofree char *probe = probe_path();
  const char *opts[] = {"--audit", audit, "--allow-read", data, NULL};
  const char *ok[] = {probe, "read", data, NULL};
  result r = sbx_run(opts, ok);
  ck_assert_int_eq(r.status, 0);
  result_clear(&r);
  const char *no[] = {probe, "read", canary, NULL};
  expect(sbx_run(opts, no), 1, NULL, NULL);

  g_autofree char *text = NULL;
  ck_assert(g_file_get_contents(audit, &text, NULL, NULL));
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  bool allowed = false, denied = false;
  int objects = 0;
  for (char **l = lines; *l; l++) {
    if (!**l)
      continue;
    g_autoptr(JsonParser) p = json_parser_new();
    ck_assert_msg(json_parser_load_from_data(p, *l, -1, NULL), "%s", *l);
    JsonObject *o = json_node_get_object(json_parser_get_root(p));
    ck_assert_ptr_nonnull(o);
    objects++;
    const char *path =
        json_object_get_string_member_with_default(o, "path", "");
    const char *dec = json_object_get_string_member(o, "decision");
    if (strcmp(path, data) == 0 && strcmp(dec, "allow") == 0)
      allowed = true;
    if (strcmp(path, canary) == 0 && strcmp(dec, "deny") == 0) {
      denied = true;
      ck_assert_str_eq(json_object_get_string_member(o, "operation"), "open");
      /* Flags spelled as the broker's audit lines spell them. */
      ck_assert(g_str_has_prefix(json_object_get_string_member(o, "flags"),
                                 "O_RDONLY"));
      /* Outside every grant: missing, as in the default mode's tree. */
      ck_assert_int_eq(json_object_get_int_member(o, "errno"), ENOENT);
    }
  }
  ck_assert_int_gt(objects, 2);
  ck_assert(allowed);
  ck_assert(denied);
}
END_TEST

START_TEST(a_policy_layer_narrows_and_never_widens) {
  g_autofree char *dir = make_dir("layer");
  g_autofree char *sub = path_in("layer/sub");
  g_autofree char *canary = make_file("layer-canary", "c");
  g_autofree char *no_mkdir = make_file("no-mkdir.policy",
                                        "@denylist\n"
                                        "mkdir: return EPERM\n"
                                        "mkdirat: return EPERM\n");
  g_autofree char *allow_all = make_file("allow-all.policy",
                                         "@denylist\n"
                                         "acct: return EPERM\n");
  g_autofree char *probe = probe_path();
  const char *mk[] = {probe, "mkdir", sub, NULL};
  const char *plain[] = {"--allow-write", dir, NULL};
  result r = sbx_run(plain, mk);
  ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
  ck_assert_int_eq(rmdir(sub), 0);
  result_clear(&r);

  const char *narrowed[] = {"--allow-write", dir, "--policy", no_mkdir, NULL};
  r = sbx_run(narrowed, mk);
  ck_assert_int_eq(r.status, 1);
  assert_contains(r.out, "errno=1\n");
  ck_assert_int_eq(access(sub, F_OK), -1);
  result_clear(&r);

  /* A layer that allows (nearly) everything does not make the canary
   * readable: the baseline still sends the open to the supervisor, or
   * in the default mode the canary is not in the tree. */
  const char *rd[] = {probe, "read", canary, NULL};
  const char *widened[] = {"--policy", allow_all, NULL};
  expect(sbx_run(widened, rd), 1, "errno=2\n", NULL);
}
END_TEST

START_TEST(a_policy_layer_that_needs_the_listener_or_forbids_exec_is_refused) {
  g_autofree char *notify =
      make_file("notify.policy", "@default allow\nopenat: user-notify\n");
  g_autofree char *noexec =
      make_file("noexec.policy", "@default allow\nexecve: return EPERM\n");
  const char *t[] = {"/bin/true", NULL};
  const char *o1[] = {"--policy", notify, NULL};
  result r = sbx_run(o1, t);
  ck_assert_int_eq(r.status, 125);
  assert_contains(r.err, "user-notify is reserved");
  result_clear(&r);
  const char *o2[] = {"--policy", noexec, NULL};
  expect(sbx_run(o2, t), 125, NULL, "does not allow execve");
}
END_TEST

/* Tracing (a debugger, strace) is refused with the option that allows
 * it, and works with --allow-ptrace (sbx_run_escape_test shows it reaches
 * only the program's own processes). */
START_TEST(tracing_needs_allow_ptrace_and_the_refusal_names_it) {
  g_autofree char *probe = probe_path();
  const char *traceme[] = {probe, "traceme", NULL};
  expect(run(traceme), 0, "traceme=ok", NULL);
  result r = sbx_run(NULL, traceme);
  ck_assert_msg(r.status == 1, "status %d: %s%s", r.status, r.out, r.err);
  assert_contains(r.out, "traceme=refused");
  expect_denial_line(&r,
                     "sbx: denied syscall ptrace (allow with --allow-ptrace)");
  result_clear(&r);
  r = sbx_run_explain(NULL, traceme);
  ck_assert_int_eq(r.status, 1);
  assert_contains(r.err, "sbx: to allow them: --allow-ptrace");
  result_clear(&r);
  const char *allow[] = {"--allow-ptrace", NULL};
  expect(sbx_run(allow, traceme), 0, "traceme=ok", NULL);
}
END_TEST

/* A layer's 'trace' action lets a tracer decide the call: under
 * --allow-ptrace that would be the program itself, so the layer is
 * refused, naming the rule; without it, the layer runs. */
START_TEST(a_layer_that_hands_calls_to_a_tracer_is_refused_under_allow_ptrace) {
  g_autofree char *layer =
      make_file("trace.policy", "@default allow\nexecve: 1\nmincore: trace\n");
  const char *t[] = {"/bin/true", NULL};
  const char *plain[] = {"--policy", layer, NULL};
  expect(sbx_run(plain, t), 0, NULL, NULL);
  const char *traced[] = {"--allow-ptrace", "--policy", layer, NULL};
  result r = sbx_run(traced, t);
  ck_assert_int_eq(r.status, 125);
  g_autofree char *where = g_strdup_printf("%s:3: mincore: 'trace'", layer);
  assert_contains(r.err, where);
  result_clear(&r);
}
END_TEST

START_TEST(a_profile_grants_what_its_broker_rules_name) {
  g_autofree char *dir = make_dir("profiled");
  g_autofree char *data = make_file("profiled/data", "from the profile");
  g_autofree char *text = g_strdup_printf(
      "[profile]\n"
      "description=test\n"
      "seccomp=sbx-run.policy\n"
      "[broker]\n"
      "rules=read %s/\n",
      dir);
  g_autofree char *profile = make_file("test.profile", text);
  g_autofree char *probe = probe_path();
  const char *cmd[] = {probe, "read", data, NULL};
  result r = sbx_run(NULL, cmd);
  ck_assert_int_eq(r.status, 1);
  result_clear(&r);
  const char *opts[] = {"--profile", profile, NULL};
  expect(sbx_run(opts, cmd), 0, "data=from the profile", NULL);

  /* NAME.profile without a '/' is the file in the current directory
   * (where sbx-learn writes); a name no file has there is refused. */
  g_autofree char *bin = sbx_run_path();
  g_autofree char *cwd = g_get_current_dir();
  g_autofree char *profile_dir = g_path_get_dirname(profile);
  ck_assert_int_eq(chdir(profile_dir), 0);
  const char *here[] = {bin,   "--profile", "test.profile", "--",
                        probe, "read",      data,           NULL};
  expect(run(here), 0, "data=from the profile", NULL);
  const char *absent[] = {
      bin, "--profile", "absent.profile", "--", probe, "read", data, NULL};
  expect(run(absent), 125, NULL, "absent.profile");
  ck_assert_int_eq(chdir(cwd), 0);

  g_autofree char *bad =
      make_file("bad.profile", "[profile]\nseccomp=sbx-run.policy\nbogus=1\n");
  const char *o2[] = {"--profile", bad, NULL};
  const char *t[] = {"/bin/true", NULL};
  expect(sbx_run(o2, t), 125, NULL, "bogus");
}
END_TEST

/* A rule naming a directory without a trailing slash grants the directory
 * itself - its listing - and not the files below it, in both modes (in
 * the default mode a Landlock rule on a directory would reach them all);
 * with the slash, the files too. */
START_TEST(an_exact_directory_rule_grants_its_listing_not_its_files) {
  g_autofree char *dir = make_dir("exact");
  g_autofree char *data = make_file("exact/data", "below");
  g_autofree char *probe = probe_path();
  const char *read_data[] = {probe, "read", data, NULL};
  const char *list[] = {"/bin/ls", dir, NULL};
  expect(run(read_data), 0, "data=below", NULL);
  for (int slash = 0; slash <= 1; slash++) {
    g_autofree char *text = g_strdup_printf(
        "[profile]\n"
        "description=test\n"
        "seccomp=sbx-run.policy\n"
        "[broker]\n"
        "rules=read %s%s\n",
        dir, slash ? "/" : "");
    g_autofree char *name =
        g_strdup_printf("exact-%s.profile", slash ? "below" : "dir");
    g_autofree char *profile = make_file(name, text);
    const char *opts[] = {"--profile", profile, NULL};
    expect(sbx_run(opts, list), 0, "data", NULL);
    if (slash) {
      expect(sbx_run(opts, read_data), 0, "data=below", NULL);
    } else {
      result r = sbx_run(opts, read_data);
      ck_assert_msg(r.status == 1, "status %d: %s%s", r.status, r.out, r.err);
      assert_lacks(r.out, "data=below");
      result_clear(&r);
    }
  }
}
END_TEST

START_TEST(environment_options_shape_the_programs_environment) {
  g_autofree char *probe = probe_path();
  const char *cmd[] = {probe, "env", "SBX_TEST_VAR", NULL};
  const char *set[] = {"--setenv", "SBX_TEST_VAR=hello", NULL};
  result r = sbx_run(set, cmd);
  ck_assert_int_eq(r.status, 0);
  assert_contains(r.out, "SBX_TEST_VAR=hello");
  result_clear(&r);
  g_setenv("SBX_TEST_VAR", "inherited", TRUE);
  r = sbx_run(NULL, cmd);
  assert_contains(r.out, "SBX_TEST_VAR=inherited");
  result_clear(&r);
  const char *clear[] = {"--clear-env", NULL};
  expect(sbx_run(clear, cmd), 1, "SBX_TEST_VAR=(unset)", NULL);
  const char *unset[] = {"--unsetenv", "SBX_TEST_VAR", NULL};
  expect(sbx_run(unset, cmd), 1, NULL, NULL);
  g_unsetenv("SBX_TEST_VAR");
}
END_TEST

/* ---- O_PATH, and a supervisor that fails (S32) -------------------------- */

START_TEST(cp_mv_and_install_into_a_write_grant_work) {
  g_autofree char *dir = make_dir("grant");
  g_autofree char *sub = make_dir("grant/sub");
  g_autofree char *f = make_file("grant/f", "copied\n");
  g_autofree char *g = make_file("grant/g", "moved\n");
  const char *w[] = {"--allow-write", dir, NULL};
  result r;
  /* Each opens the destination directory with O_PATH. */
  const char *cp[] = {"/bin/cp", f, sub, NULL};
  expect(sbx_run(w, cp), 0, NULL, NULL);
  g_autofree char *copied = g_build_filename(sub, "f", NULL);
  ck_assert(g_file_test(copied, G_FILE_TEST_IS_REGULAR));
  const char *mv[] = {"/bin/mv", g, sub, NULL};
  expect(sbx_run(w, mv), 0, NULL, NULL);
  g_autofree char *moved = g_build_filename(sub, "g", NULL);
  ck_assert(g_file_test(moved, G_FILE_TEST_IS_REGULAR));
  ck_assert(!g_file_test(g, G_FILE_TEST_EXISTS));
  g_autofree char *inst = g_build_filename(sub, "inst", NULL);
  const char *install[] = {"/usr/bin/install", "-m", "644", f, inst, NULL};
  expect(sbx_run(w, install), 0, NULL, NULL);
  ck_assert(g_file_test(inst, G_FILE_TEST_IS_REGULAR));

  /* Without the grant the same copy is refused, and sbx-run returns. */
  g_autofree char *again = g_build_filename(sub, "again", NULL);
  const char *cp2[] = {"/bin/cp", f, again, NULL};
  r = sbx_run(NULL, cp2);
  ck_assert_int_eq(r.status, 1);
  expect_denial_line(&r, "sbx: denied");
  result_clear(&r);
  ck_assert(!g_file_test(again, G_FILE_TEST_EXISTS));
}
END_TEST

START_TEST(an_o_path_open_is_decided_as_a_read) {
  g_autofree char *dir = make_dir("opath");
  g_autofree char *f = make_file("opath/f", "x");
  g_autofree char *probe = probe_path();
  const char *cmd[] = {probe, "opath", dir, "f", NULL};
  result r = run(cmd);
  ck_assert_int_eq(r.status, 0);
  assert_contains(r.out, "openat=ok");
  result_clear(&r);
  const char *ro[] = {"--allow-read", dir, NULL};
  expect(sbx_run(ro, cmd), 0, "type=dir\nopenat=ok", NULL);
  /* Outside the grants an O_PATH open is refused like a read. */
  expect(sbx_run(NULL, cmd), 1, "open=No such file or directory", NULL);
}
END_TEST

/* A shell's `echo x > /dev/stdout` reopens its output by name: with the
 * access the descriptor has, that works wherever the output goes (here a
 * file outside every grant); reading the output back asks for more, and
 * only a grant gives it. */
START_TEST(a_descriptor_reopened_by_name_keeps_the_access_it_has) {
  g_autofree char *out = path_in("out.txt");
  const char *sh[] = {"/bin/sh", "-c",
                      "echo x > /dev/stdout && echo y >> /dev/fd/1 && "
                      "echo wrote >&2",
                      NULL};
  for (int sandboxed = 0; sandboxed <= 1; sandboxed++) {
    int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    ck_assert_int_ge(fd, 0);
    result r = sandboxed ? sbx_run_at(NULL, -1, fd, NULL, sh)
                         : run_at(sh, NULL, -1, fd);
    close(fd);
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    assert_contains(r.err, "wrote");
    result_clear(&r);
    g_autofree char *text = NULL;
    ck_assert(g_file_get_contents(out, &text, NULL, NULL));
    ck_assert_str_eq(text, "x\ny\n");
  }
  /* Reading back what the descriptor only writes: the supervisor decides
   * on the file's name (the default mode hands such an output to the
   * program as a relayed pipe, which has nothing to read back). */
  const char *back[] = {"/bin/sh", "-c",
                        "read l < /dev/stdout && echo \"read=$l\" >&2", NULL};
  const char *explain[] = {"--explain", NULL};
  const char *granted[] = {"--explain", "--allow-read", out, NULL};
  /* Every name of the descriptor is decided alike. */
  static const char *const names[] = {"/proc/self/fd/1", "/dev/fd/1",
                                      "/proc/thread-self/fd/1"};
  for (size_t i = 0; i < G_N_ELEMENTS(names); i++) {
    g_autofree char *script =
        g_strdup_printf("read l < %s && echo \"read=$l\" >&2", names[i]);
    const char *via[] = {"/bin/sh", "-c", script, NULL};
    int fd = open(out, O_WRONLY | O_CLOEXEC);
    ck_assert_int_ge(fd, 0);
    result r = sbx_run_at(NULL, -1, fd, explain, via);
    close(fd);
    ck_assert_msg(r.status != 0, "read back through %s: %s", names[i], r.err);
    assert_lacks(r.err, "read=");
    result_clear(&r);
  }
  for (int grant = 0; grant <= 1; grant++) {
    int fd = open(out, O_WRONLY | O_CLOEXEC);
    ck_assert_int_ge(fd, 0);
    result r = sbx_run_at(NULL, -1, fd, grant ? granted : explain, back);
    close(fd);
    if (grant) {
      ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
      assert_contains(r.err, "read=x");
    } else {
      ck_assert_msg(r.status != 0, "read back without a grant: %s", r.err);
      assert_lacks(r.err, "read=");
      g_autofree char *line =
          g_strdup_printf("(allow with --allow-read %s)", out);
      assert_contains(r.err, line);
    }
    result_clear(&r);
  }
}
END_TEST

/* An inotify watch needs read on what it watches, in both modes, and
 * reports what happens there; a link's watch is on the link or on what
 * it leads to, as the program asked. */
START_TEST(an_inotify_watch_needs_read_on_what_it_watches) {
  g_autofree char *dir = make_dir("watched");
  g_autofree char *outside = make_dir("unwatched");
  g_autofree char *link = path_in("watched/link");
  ck_assert_int_eq(symlink(outside, link), 0);
  g_autofree char *probe = probe_path();
  const char *cmd[] = {probe, "watch", dir, link, NULL};
  const char *out_cmd[] = {probe, "watch", outside, NULL};
  /* Control: outside the sandbox every watch is made. */
  expect(run(cmd), 0, "watch=ok\nevent=new\nwatch-link=ok\nwatch-target=ok",
         NULL);
  g_autofree char *made = path_in("watched/new");
  ck_assert_int_eq(unlink(made), 0);
  /* A write grant: the watch, its event and the link itself; the link's
   * target is outside the grants. */
  const char *rw[] = {"--allow-write", dir, NULL};
  result r = sbx_run(rw, cmd);
  ck_assert_msg(r.status == 1, "status %d: %s%s", r.status, r.out, r.err);
  assert_contains(r.out, "watch=ok\nevent=new\nwatch-link=ok\n");
  assert_lacks(r.out, "watch-target=ok");
  result_clear(&r);
  ck_assert_int_eq(unlink(made), 0);
  /* Outside the grants no watch is made. */
  r = sbx_run(rw, out_cmd);
  ck_assert_msg(r.status == 1, "status %d: %s%s", r.status, r.out, r.err);
  assert_lacks(r.out, "watch=ok");
  if (sbx_run_explaining()) {
    g_autofree char *line = g_strdup_printf(
        "sbx: denied watch %s (allow with --allow-read %s)", outside, outside);
    assert_contains(r.err, line);
  }
  result_clear(&r);
  /* With read on both, every watch is made. */
  const char *both[] = {"--allow-write", dir, "--allow-read", outside, NULL};
  r = sbx_run(both, cmd);
  ck_assert_msg(r.status == 0, "status %d: %s%s", r.status, r.out, r.err);
  assert_contains(r.out, "watch=ok\nevent=new\n");
  assert_contains(r.out, "watch-target=ok");
  result_clear(&r);
}
END_TEST

/* cmd run with a write grant of dir prints what it printed outside
 * (control, which is cleared). */
static void expect_as_outside(const char *dir, const char *const *cmd,
                              result *control) {
  const char *rw[] = {"--allow-write", dir, NULL};
  result r = sbx_run(rw, cmd);
  ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
  ck_assert_str_eq(r.out, control->out);
  result_clear(&r);
  result_clear(control);
}

/* A name written as a directory ("link/", "f/", "sub/.") follows a final
 * link and must name a directory, as the kernel reads it: in both modes
 * every call on such a name answers as it does outside, and nothing the
 * kernel refuses (unlink of "f/", rmdir of "sub/.") changes anything. */
START_TEST(a_name_written_as_a_directory_is_read_as_the_kernel_reads_it) {
  g_autofree char *dir = make_dir("forms");
  g_autofree char *sub = make_dir("forms/sub");
  g_autofree char *f = make_file("forms/f", "f");
  g_autofree char *link = path_in("forms/link");
  g_autofree char *flink = path_in("forms/flink");
  ck_assert_int_eq(symlink("sub", link), 0);
  ck_assert_int_eq(symlink("f", flink), 0);
  g_autofree char *probe = probe_path();
  const char *cmd[] = {probe, "dirforms", dir, NULL};
  /* Control: what the kernel answers outside. */
  result control = run(cmd);
  ck_assert_msg(control.status == 0, "status %d: %s", control.status,
                control.err);
  static const char *const kernel[] = {"lstat link=link\n",
                                       "lstat link/=dir\n",
                                       "lstat flink/=ENOTDIR\n",
                                       "readlink link/=EINVAL\n",
                                       "open-nofollow link/=ok\n",
                                       "create new/=EISDIR\n",
                                       "unlink f/=ENOTDIR\n",
                                       "unlink link/=ENOTDIR\n",
                                       "unlink sub/=EISDIR\n",
                                       "rmdir sub/.=EINVAL\n",
                                       "rename f/=ENOTDIR\n",
                                       "rename sub/.=EBUSY\n",
                                       "left f=file\n",
                                       "left link=link\n",
                                       "left new=ENOENT\n"};
  for (size_t i = 0; i < G_N_ELEMENTS(kernel); i++)
    assert_contains(control.out, kernel[i]);
  expect_as_outside(dir, cmd, &control);
}
END_TEST

/* A `..` after a symbolic link leads to the parent of the link's
 * target, as the kernel's walk leads, in both modes: relative to a
 * directory descriptor and in an absolute name, through chains of links,
 * with the kernel's errors for a missing name, a file or a loop before
 * the `..`; a directory is listed and made through such a name. */
START_TEST(a_dotdot_after_a_link_leads_where_the_kernels_walk_leads) {
  g_autofree char *dir = make_dir("dotdot");
  g_autofree char *a = make_dir("dotdot/a");
  g_autofree char *b = make_dir("dotdot/a/b");
  g_autofree char *inner = make_dir("dotdot/a/b/dir");
  g_autofree char *f_top = make_file("dotdot/f", "top");
  g_autofree char *f_a = make_file("dotdot/a/f", "in-a");
  g_autofree char *f_b = make_file("dotdot/a/b/f", "in-b");
  g_autofree char *f_top2 = make_file("dotdot/top", "a file");
  static const struct {
    const char *name, *to;
  } links[] = {{"link", "a/b/dir"}, {"chain", "link"}, {"loop", "loop"}};
  for (size_t i = 0; i < G_N_ELEMENTS(links); i++) {
    g_autofree char *name = g_strdup_printf("dotdot/%s", links[i].name);
    g_autofree char *l = path_in(name);
    ck_assert_int_eq(symlink(links[i].to, l), 0);
  }
  g_autofree char *abs = path_in("dotdot/abs");
  ck_assert_int_eq(symlink(inner, abs), 0);
  g_autofree char *probe = probe_path();
  const char *cmd[] = {probe, "dotdot", dir, NULL};
  /* Control: what the kernel answers outside. */
  result control = run(cmd);
  ck_assert_msg(control.status == 0, "status %d: %s", control.status,
                control.err);
  static const char *const kernel[] = {
      "at link/../f=in-b\n",      "at abs/../f=in-b\n",
      "at link/../../../f=top\n", "at chain/../f=in-b\n",
      "at missing/../f=ENOENT\n", "at top/../f=ENOTDIR\n",
      "at loop/../f=ELOOP\n",     "at link/../../b/f=in-b\n",
      "list link/..=2\n",         "mkdir link/../made=ok in-a/b=yes\n"};
  for (size_t i = 0; i < G_N_ELEMENTS(kernel); i++)
    assert_contains(control.out, kernel[i]);
  g_autofree char *made = path_in("dotdot/a/b/made");
  ck_assert_int_eq(rmdir(made), 0);
  expect_as_outside(dir, cmd, &control);
}
END_TEST

/* The program's own /proc entries answer as the kernel does in both
 * modes: /proc/thread-self and its files, the links /proc/self and
 * /proc/thread-self (read, and looked at as links), /dev/fd listed, and a
 * descriptor's name in /proc/self/fd looked at as the link it is (ls -l). */
START_TEST(the_programs_own_proc_entries_answer_as_the_kernels) {
  const char *sh[] = {
      "/bin/sh", "-c",
      "cat /proc/thread-self/comm; "
      "readlink /proc/self | grep -qx '[0-9]*' && echo self=link; "
      "readlink /proc/thread-self | grep -qx '[0-9]*/task/[0-9]*' && "
      "echo thread-self=link; "
      "ls /dev/fd/ | grep -qx 0 && echo dev-fd=listed; "
      "readlink /dev/stdin; "
      "stat -c %F /proc/self/fd/0 /proc/thread-self/fd/1; "
      "ls -l /proc/self/fd/ | grep -q '^l' && echo ls-l=links; "
      "stat -c %F /proc/self /proc/thread-self /dev/fd; "
      "stat -L -c %F /proc/self /proc/thread-self /dev/fd",
      NULL};
  const char *expected =
      "cat\nself=link\nthread-self=link\ndev-fd=listed\n"
      "/proc/self/fd/0\nsymbolic link\nsymbolic link\n"
      "ls-l=links\n"
      "symbolic link\nsymbolic link\nsymbolic link\n"
      "directory\ndirectory\ndirectory\n";
  result control = run(sh);
  ck_assert_msg(control.status == 0, "status %d: %s", control.status,
                control.err);
  ck_assert_str_eq(control.out, expected);
  result_clear(&control);
  const char *opts[] = {"--allow-exec", NULL};
  result r = sbx_run(opts, sh);
  ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
  ck_assert_str_eq(r.out, expected);
  /* Nothing of the program's own is refused (under --explain the PATH
   * search's refusals are printed too). */
  assert_lacks(r.err, " /proc/");
  assert_lacks(r.err, " /dev/");
  result_clear(&r);
}
END_TEST

/* A FIFO the program makes in the sandbox's own /tmp or in a write grant
 * opens as the kernel opens it, in both modes: a reader waits for a
 * writer and a writer for a reader, unless it asks not to wait; a signal
 * interrupts the wait; O_RDWR never waits. Its mode and times change like
 * a file's, by name or through an O_PATH descriptor's. (Where it is
 * made: sbx_run_escape_test.) */
START_TEST(a_fifo_the_program_makes_opens_as_the_kernel_opens_it) {
  bool in_tmp = _i == 0;
  if (in_tmp && !sbx_run_has_private_dirs())
    return; /* no /tmp of the sandbox's own */
  g_autofree char *dir = make_dir("fifo");
  g_autofree char *granted = make_dir("fifo-granted");
  g_autofree char *probe = probe_path();
  const char *outside[] = {probe, "fifo", dir, NULL};
  const char *expected =
      "mkfifo=ok\n"
      "attributes=changed\n"
      "opath-chmod=ok\n"
      "write-nonblock=ENXIO\n"
      "reader=from-writer\n"
      "writer=ok read-by-peer=from-parent\n"
      "interrupted=EINTR\n"
      "empty-writer=eof\n"
      "read-write=ok\n";
  /* Control: the kernel's answers outside. */
  expect(run(outside), 0, expected, NULL);
  const char *inside[] = {probe, "fifo", in_tmp ? "/tmp" : granted, NULL};
  const char *w_args[] = {"-w", granted, NULL};
  result r = sbx_run(in_tmp ? NULL : w_args, inside);
  ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
  ck_assert_str_eq(r.out, expected);
  result_clear(&r);
}
END_TEST

/* A peer on the host: after 200 ms it opens the FIFO with flags and
 * writes text, or (text NULL) reads what comes into got. */
typedef struct {
  const char *path;
  int flags;
  const char *text;
  char got[64];
  bool done;
  pthread_t thread;
} host_peer;

static void *host_peer_main(void *arg) {
  host_peer *p = arg;
  usleep(200 * 1000);
  int fd = open(p->path, p->flags | O_CLOEXEC);
  if (fd < 0)
    return NULL;
  size_t len = p->text ? strlen(p->text) : 0;
  p->done = p->text ? write(fd, p->text, len) == (ssize_t)len
                    : read(fd, p->got, sizeof(p->got) - 1) > 0;
  close(fd);
  return NULL;
}

static void host_peer_start(host_peer *p, const char *path, int flags,
                            const char *text) {
  *p = (host_peer){.path = path, .flags = flags, .text = text};
  ck_assert_int_eq(pthread_create(&p->thread, NULL, host_peer_main, p), 0);
}

/* A FIFO in a grant meets its peer on the host, in both modes: the
 * program's writer waits for a reader outside the sandbox, and its reader
 * for a writer there; a read grant lets the program read from one, not
 * write to it. */
START_TEST(a_fifo_in_a_grant_meets_its_peer_on_the_host) {
  g_autofree char *dir = make_dir("fifo-host");
  g_autofree char *fifo = path_in("fifo-host/pipe");
  ck_assert_int_eq(mkfifo(fifo, 0666), 0);
  ck_assert_int_eq(chmod(fifo, 0666), 0);
  g_autofree char *probe = probe_path();
  const char *write_[] = {probe, "write", fifo, NULL};
  const char *read_[] = {probe, "read", fifo, NULL};
  const char *w_args[] = {"-w", dir, NULL};
  const char *r_args[] = {"-r", dir, NULL};

  /* The program writes; a reader comes on the host. */
  host_peer peer;
  host_peer_start(&peer, fifo, O_RDONLY, NULL);
  result r = sbx_run(w_args, write_);
  ck_assert_msg(r.status == 0, "status %d: %s%s", r.status, r.out, r.err);
  ck_assert_str_eq(r.out, "write=ok\n");
  result_clear(&r);
  pthread_join(peer.thread, NULL);
  ck_assert(peer.done);
  ck_assert_str_eq(peer.got, "written\n");

  /* The program reads, from a read grant; a writer comes on the host. */
  host_peer_start(&peer, fifo, O_WRONLY, "from-host");
  r = sbx_run(r_args, read_);
  ck_assert_msg(r.status == 0, "status %d: %s%s", r.status, r.out, r.err);
  ck_assert_str_eq(r.out, "read=ok\ndata=from-host\n");
  result_clear(&r);
  pthread_join(peer.thread, NULL);
  ck_assert(peer.done);

  /* A read grant does not write to it: refused before any wait. */
  r = sbx_run(r_args, write_);
  ck_assert_msg(r.status == 1, "status %d: %s%s", r.status, r.out, r.err);
  g_autofree char *refused = g_strdup_printf("errno=%d\n", EACCES);
  assert_contains(r.out, refused);
  result_clear(&r);
}
END_TEST

/* mknod of a regular file is a create: made in a write grant, in both
 * modes, with the caller's umask, as the kernel makes it; refused in a
 * read-only grant, and with a sticky bit (as a set-id bit, which
 * sbx_run_escape_test covers). */
START_TEST(a_regular_file_is_made_by_mknod_where_a_create_is_allowed) {
  g_autofree char *outside_dir = make_dir("mknod-host");
  g_autofree char *dir = make_dir("mknod");
  g_autofree char *ro = make_dir("mknod-ro");
  g_autofree char *probe = probe_path();
  const char *expected =
      "typed=file 640 size=0\n"
      "untyped=file 600 size=0\n"
      "typed=EEXIST\n";
  /* Control: the kernel's answers outside. */
  const char *outside[] = {probe, "mknod", outside_dir, NULL};
  mode_t old = umask(022);
  expect(run(outside), 0, expected, NULL);
  const char *inside[] = {probe, "mknod", dir, NULL};
  const char *w_args[] = {"-w", dir, NULL};
  result r = sbx_run(w_args, inside);
  ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
  ck_assert_str_eq(r.out, expected);
  result_clear(&r);
  /* Read-only: nothing is made. */
  const char *in_ro[] = {probe, "mknod", ro, NULL};
  const char *r_args[] = {"-r", ro, NULL};
  r = sbx_run(r_args, in_ro);
  ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
  assert_lacks(r.out, "=file");
  result_clear(&r);
  g_autofree char *made = path_in("mknod-ro/typed");
  ck_assert_int_ne(access(made, F_OK), 0);
  /* A sticky bit: refused, where outside it is set (the control). */
  static const char sticky_script[] =
      "import os, sys\ntry:\n  os.mknod(sys.argv[1], 0o101600)\n"
      "  print('made')\nexcept OSError as e:\n  print(e.errno)\n";
  g_autofree char *sticky_outside = path_in("mknod-host/sticky");
  const char *py_outside[] = {"/usr/bin/python3", "-c", sticky_script,
                              sticky_outside, NULL};
  expect(run(py_outside), 0, "made\n", NULL);
  g_autofree char *sticky = path_in("mknod/sticky");
  const char *py[] = {"/usr/bin/python3", "-c", sticky_script, sticky, NULL};
  const char *py_args[] = {"-w", dir, "-r", "/usr/lib/python3.11", NULL};
  r = sbx_run(py_args, py);
  ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
  ck_assert_str_eq(r.out, "1\n");
  result_clear(&r);
  ck_assert_int_ne(access(sticky, F_OK), 0);
  umask(old);
}
END_TEST

/* The setgid bit alone is set on a directory in a write grant, in both
 * modes, by path and through a descriptor: files made there take the
 * directory's group (git init --shared=group, group project
 * directories). On a file, and the setuid bit anywhere, it never is
 * (sbx_run_escape_test has the files). */
static mode_t mode_of(const char *path) {
  struct stat st;
  ck_assert_int_eq(stat(path, &st), 0);
  return st.st_mode & 07777;
}

START_TEST(the_setgid_bit_is_set_on_a_directory_and_no_file) {
  g_autofree char *dir = make_dir("group");
  g_autofree char *shared = make_dir("group/shared");
  g_autofree char *file = make_file("group/file", "f");
  ck_assert_int_eq(chmod(shared, 0755), 0);
  g_autofree char *probe = probe_path();
  const char *by_fd[] = {probe, "fchmod", shared, "02755", NULL};
  const char *by_path[] = {"/bin/chmod", "2775", shared, NULL};
  const char *setuid_dir[] = {probe, "fchmod", shared, "04755", NULL};
  const char *on_file[] = {probe, "fchmod", file, "02644", NULL};
  /* Control: outside, the bit is set. */
  expect(run(by_fd), 0, "fchmod=ok", NULL);
  ck_assert_uint_eq(mode_of(shared), 02755);
  ck_assert_int_eq(chmod(shared, 0755), 0);
  const char *rw[] = {"--allow-write", dir, NULL};
  result r = sbx_run(rw, by_fd);
  ck_assert_msg(r.status == 0, "status %d: %s%s", r.status, r.out, r.err);
  result_clear(&r);
  ck_assert_uint_eq(mode_of(shared), 02755);
  ck_assert_int_eq(chmod(shared, 0755), 0);
  r = sbx_run(rw, by_path);
  ck_assert_msg(r.status == 0, "status %d: %s%s", r.status, r.out, r.err);
  result_clear(&r);
  ck_assert_uint_eq(mode_of(shared), 02775);
  /* The setuid bit, and the setgid bit of a file, stay refused. */
  r = sbx_run(rw, setuid_dir);
  ck_assert_msg(r.status != 0, "setuid on a directory: %s", r.out);
  assert_contains(r.out, "fchmod=Operation not permitted");
  result_clear(&r);
  r = sbx_run(rw, on_file);
  ck_assert_msg(r.status != 0, "setgid on a file: %s", r.out);
  result_clear(&r);
  ck_assert_uint_eq(mode_of(shared), 02775);
  ck_assert_uint_eq(mode_of(file), 0644);
}
END_TEST

/* ---- pseudo-terminals ---------------------------------------------------
 * The program makes pseudo-terminals of its own with no grant (script,
 * expect, tmux, Python's pty): in the default mode from a devpts instance
 * of the sandbox's, also where a read grant shows the host's /dev, under
 * the supervisor from the host's, where only the terminals the program
 * made are opened for it. No other terminal of the host's is reachable
 * either way. */
START_TEST(pseudo_terminals_are_the_programs_own_and_no_others) {
  g_autofree char *probe = probe_path();
  const char *pty[] = {probe, "pty", NULL};
  /* Control: outside the sandbox. */
  expect(run(pty), 0, "got=ping", NULL);

  struct stat host;
  ck_assert_int_eq(stat("/dev/pts", &host), 0);
  g_autofree char *host_dev =
      g_strdup_printf("dev=%u:%u\n", major(host.st_dev), minor(host.st_dev));
  const char *all[] = {"--allow-read", "/", NULL};
  const char *const *grants[] = {NULL, all};
  for (size_t i = 0; i < G_N_ELEMENTS(grants); i++) {
    result r = sbx_run(grants[i], pty);
    ck_assert_msg(r.status == 0, "status %d: %s%s", r.status, r.out, r.err);
    assert_contains(r.out, "pty=ok\nname=/dev/pts/");
    assert_contains(r.out, "got=ping\nttyname=/dev/pts/");
    if (sbx_run_kernel_decides()) {
      assert_contains(r.out, "dev=");
      assert_lacks(r.out, host_dev);
    }
    result_clear(&r);
  }

  /* A terminal of the host's the program did not make: the test's own.
   * Control: outside, it opens. */
  int master = posix_openpt(O_RDWR | O_NOCTTY);
  ck_assert_int_ge(master, 0);
  ck_assert_int_eq(grantpt(master), 0);
  ck_assert_int_eq(unlockpt(master), 0);
  g_autofree char *slave = g_strdup(ptsname(master));
  ck_assert_int_eq(chmod(slave, 0666), 0);
  const char *write_slave[] = {probe, "write", slave, NULL};
  expect(run(write_slave), 0, "write=ok", NULL);
  const char *both[] = {"--allow-write", "/dev/ptmx", "--allow-write",
                        "/dev/pts", NULL};
  result r = sbx_run(both, write_slave);
  ck_assert_msg(r.status == 1, "status %d: %s%s", r.status, r.out, r.err);
  assert_lacks(r.out, "write=ok");
  result_clear(&r);
  close(master);
}
END_TEST

START_TEST(sbx_run_inside_sbx_run_exits_125_and_says_why) {
  g_autofree char *bin = sbx_run_path();
  g_autofree char *bindir = g_path_get_dirname(bin);
  /* /proc/self/environ: a sanitizer runtime in the inner sbx-run reads
   * its options (the suite's detect_leaks=0) there. */
  const char *opts[] = {"--allow-exec", "--allow-read",       bindir,
                        "--allow-read", "/proc/self/environ", NULL};
  const char *inner[] = {bin, "--", "/bin/true", NULL};
  expect(sbx_run(opts, inner), 125, NULL,
         "a sandbox cannot be started inside it");
}
END_TEST

/* Runs `probe spawn-then-acct` under sbx-run, with the supervisor fault
 * preloaded or not, and reads the sandbox's stdout until every process
 * that holds it is gone. */
static result run_spawn_then_acct(bool fault, char **out) {
  g_autofree char *probe = probe_path();
  g_autofree char *preload = tool_path("tests/libsupervisor_fault_preload.so");
  ck_assert(g_file_test(preload, G_FILE_TEST_IS_REGULAR));
  int p[2];
  ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
  if (fault) {
    g_setenv("LD_PRELOAD", preload, TRUE);
    /* A sanitizer runtime must otherwise come first in the list. */
    g_setenv("ASAN_OPTIONS", "verify_asan_link_order=0:detect_leaks=0", TRUE);
  }
  const char *cmd[] = {probe, "spawn-then-acct", NULL};
  /* The supervisor of --explain decides acct(2). */
  const char *explain[] = {"--explain", "--unsetenv", "LD_PRELOAD", NULL};
  result r = sbx_run_at(NULL, -1, p[1], explain, cmd);
  g_unsetenv("LD_PRELOAD");
  close(p[1]);
  GString *s = g_string_new(NULL);
  char buf[256];
  ssize_t n;
  /* EOF only once the program's child, which holds stdout, is gone. */
  while ((n = read(p[0], buf, sizeof(buf))) > 0)
    g_string_append_len(s, buf, n);
  close(p[0]);
  *out = g_string_free(s, FALSE);
  return r;
}

START_TEST(a_failing_supervisor_stops_the_sandbox_and_sbx_run_exits) {
  g_autofree char *out = NULL;
  /* Control: without the fault, acct(2) is refused and the probe ends. */
  result r = run_spawn_then_acct(false, &out);
  ck_assert_msg(r.status == 1, "status %d: %s", r.status, r.err);
  assert_contains(out, "child=");
  assert_contains(out, "acct=Operation not permitted");
  result_clear(&r);
  g_clear_pointer(&out, g_free);

  r = run_spawn_then_acct(true, &out);
  ck_assert_msg(r.status == 125, "status %d: %s", r.status, r.err);
  assert_contains(r.err, "sbx-run: the supervisor failed");
  assert_contains(r.err, "were killed");
  assert_contains(out, "child=");
  /* The probe never got an answer to acct(2). */
  assert_lacks(out, "acct=");
  result_clear(&r);
}
END_TEST

/* ---- identity calls ----------------------------------------------------- */

START_TEST(identity_calls_that_change_nothing_are_allowed_and_others_refused) {
  g_autofree char *probe = probe_path();
  const char *same[] = {probe, "setids", NULL};
  /* Control: outside the sandbox each call succeeds (setgroups needs
   * CAP_SETGID there, even to change nothing). */
  result r = run(same);
  assert_contains(r.out, "setresuid=ok\nsetresgid=ok\nsetuid=ok");
  if (geteuid() == 0)
    assert_contains(r.out, "setgroups=ok");
  result_clear(&r);
  r = sbx_run(NULL, same);
  if (sbx_run_kernel_decides()) {
    /* Without a supervisor the kernel answers setgroups, which needs
     * CAP_SETGID even to change nothing: refused as it is outside for
     * every user but root. */
    ck_assert_msg(r.status == 1, "status %d: %s%s", r.status, r.out, r.err);
    assert_contains(r.out, "setresuid=ok\nsetresgid=ok\nsetuid=ok");
    assert_contains(r.out, "setfsuid=ok\n");
    assert_contains(r.out, "setgroups=Operation not permitted");
  } else {
    ck_assert_msg(r.status == 0, "status %d: %s%s", r.status, r.out, r.err);
    assert_lacks(r.out, "errno=");
    assert_contains(r.out, "setfsuid=ok\n");
    assert_lacks(r.err, "sbx: denied");
  }
  result_clear(&r);

  const char *change[] = {probe, "setids", "change", NULL};
  r = sbx_run(NULL, change);
  ck_assert_msg(r.status == 1, "status %d: %s%s", r.status, r.out, r.err);
  /* In the default mode the kernel answers: the ids are not mapped in
   * the sandbox's user namespace. */
  const char *refused =
      sbx_run_kernel_decides() ? "Invalid argument" : "Operation not permitted";
  g_autofree char *setresuid_ = g_strdup_printf("setresuid=%s", refused);
  g_autofree char *setgid_ = g_strdup_printf("setgid=%s", refused);
  assert_contains(r.out, setresuid_);
  assert_contains(r.out, setgid_);
  assert_contains(r.out, "setgroups=Operation not permitted");
  expect_denial_line(&r, "sbx: denied syscall setresuid (");
  expect_denial_line(&r, "sbx: denied syscall setgroups (");
  result_clear(&r);
}
END_TEST

START_TEST(make_runs_a_recipe) {
  g_autofree char *dir = make_dir("made");
  g_autofree char *mk =
      make_file("made/Makefile", "all:\n\techo built > result\n");
  const char *opts[] = {"--allow-exec", "--allow-write", dir, NULL};
  const char *make[] = {"/usr/bin/make", "-C", dir, NULL};
  expect(sbx_run(opts, make), 0, NULL, NULL);
  g_autofree char *out = g_build_filename(dir, "result", NULL);
  g_autofree char *text = NULL;
  ck_assert(g_file_get_contents(out, &text, NULL, NULL));
  ck_assert_str_eq(text, "built\n");
}
END_TEST

/* ---- search permission ------------------------------------------------- */

START_TEST(search_permission_on_an_allowed_directory_is_not_exec) {
  g_autofree char *dir = make_dir("searchable");
  g_autofree char *tool = make_file("searchable/tool", "#!/bin/sh\n");
  ck_assert_int_eq(chmod(tool, 0755), 0);
  g_autofree char *outside = make_dir("outside");
  g_autofree char *script = g_strdup_printf(
      "test -x '%s' && echo dir-searchable; test -x '%s' || echo "
      "file-not-executable; test -x '%s' || echo outside-refused",
      dir, tool, outside);
  const char *sh[] = {"/bin/sh", "-c", script, NULL};
  /* Control: outside the sandbox all three can be searched or run. */
  result r = run(sh);
  assert_contains(r.out, "dir-searchable");
  assert_lacks(r.out, "file-not-executable");
  result_clear(&r);
  /* The script succeeds: --explain shows the refusal it survived. */
  const char *ro[] = {"--explain", "--allow-read", dir, NULL};
  r = sbx_run(ro, sh);
  ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
  assert_contains(r.out, "dir-searchable");
  /* A file's X_OK is still exec, and outside the grants nothing is. */
  assert_contains(r.out, "file-not-executable");
  assert_contains(r.out, "outside-refused");
  g_autofree char *line = g_strdup_printf("sbx: denied access %s", tool);
  assert_contains(r.err, line);
  result_clear(&r);
}
END_TEST

START_TEST(git_init_makes_a_repository_in_a_writable_directory) {
  g_autofree char *dir = make_dir("repo");
  /* No system or user configuration: only the repository is granted. */
  g_autofree char *home = g_strdup_printf("HOME=%s", dir);
  const char *opts[] = {
      "--allow-write", dir,  "--setenv", "GIT_CONFIG_NOSYSTEM=1",
      "--setenv",      home, NULL};
  const char *git[] = {"/usr/bin/git", "init", "-q", dir, NULL};
  expect(sbx_run(opts, git), 0, NULL, NULL);
  g_autofree char *head = g_build_filename(dir, ".git", "HEAD", NULL);
  ck_assert(g_file_test(head, G_FILE_TEST_IS_REGULAR));
}
END_TEST

START_TEST(an_empty_path_is_refused_by_every_path_option) {
  g_autofree char *dir = make_dir("cwd");
  g_autofree char *data = make_file("cwd/data", "here");
  g_autofree char *probe = probe_path();
  const char *cmd[] = {probe, "read", "data", NULL};
  /* Control: "." names the current directory when that is meant. */
  const char *dot[] = {"--allow-read", ".", NULL};
  expect(sbx_run_at(dir, -1, -1, dot, cmd), 0, "data=here", NULL);
  static const char *const options[][2] = {
      {"-r", "--allow-read"},     {"--allow-read", "--allow-read"},
      {"-w", "--allow-write"},    {"--allow-write", "--allow-write"},
      {"-p", "--policy"},         {"--policy", "--policy"},
      {"--profile", "--profile"}, {"-a", "--audit"},
      {"--audit", "--audit"},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(options); i++) {
    const char *opts[] = {options[i][0], "", NULL};
    result r = sbx_run_at(dir, -1, -1, opts, cmd);
    ck_assert_msg(r.status == 125, "%s '': status %d", options[i][0], r.status);
    assert_lacks(r.out, "data=");
    g_autofree char *msg =
        g_strdup_printf("%s was given an empty path", options[i][1]);
    assert_contains(r.err, msg);
    result_clear(&r);
  }
}
END_TEST

/* ---- hints --------------------------------------------------------------- */

/* The option a denial line of r suggests for path ("" when it has none),
 * split into option and argument. */
static void hint_of(const result *r, const char *path, char **option,
                    char **value) {
  g_autofree char *start = g_strdup_printf("sbx: denied open %s", path);
  const char *line = strstr(r->err, start);
  ck_assert_msg(line != NULL, "no denial for %s in:\n%s", path, r->err);
  g_autofree char *one = g_strndup(line, strcspn(line, "\n"));
  const char *h = strstr(one, " (allow with ");
  *option = *value = NULL;
  if (!h)
    return;
  g_auto(GStrv) words = g_strsplit(h + 13, " ", 2);
  *option = g_strdup(words[0]);
  *value = g_strndup(words[1], strlen(words[1]) - 1);
}

START_TEST(a_missing_file_is_hinted_with_a_directory_sbx_run_accepts) {
  g_autofree char *dir = make_dir("present");
  g_autofree char *missing = path_in("present/absent-dir/absent.pm");
  g_autofree char *probe = probe_path();
  const char *cmd[] = {probe, "read", missing, NULL};
  /* Control: outside the sandbox the file is simply missing. */
  expect(run(cmd), 1, "errno=2\n", NULL);
  /* Outside the grants absent and refused look the same, missing
   * (S39)... */
  result r = sbx_run_explain(NULL, cmd);
  ck_assert_int_eq(r.status, 1);
  assert_contains(r.out, "errno=2\n");
  g_autofree char *option = NULL, *value = NULL;
  hint_of(&r, missing, &option, &value);
  result_clear(&r);
  /* ...and the hint names the nearest directory that exists. */
  ck_assert_str_eq(option, "--allow-read");
  ck_assert_str_eq(value, dir);
  /* Taking the hint is accepted, and fixes the refusal: the program now
   * learns the file is missing. */
  const char *opts[] = {option, value, NULL};
  r = sbx_run(opts, cmd);
  ck_assert_int_eq(r.status, 1);
  assert_contains(r.out, "errno=2\n");
  assert_lacks(r.err, "sbx: denied");
  result_clear(&r);

  /* Nothing exists below / on the way: no hint at all, never "/". */
  g_autofree char *nowhere =
      g_strdup_printf("/sbx-no-such-dir-%d/file", (int)getpid());
  const char *cmd2[] = {probe, "read", nowhere, NULL};
  r = sbx_run_explain(NULL, cmd2);
  g_autofree char *o2 = NULL, *v2 = NULL;
  hint_of(&r, nowhere, &o2, &v2);
  ck_assert_ptr_null(o2);
  result_clear(&r);
}
END_TEST

START_TEST(mkdir_p_inside_a_write_grant_prints_no_denial) {
  g_autofree char *dir = make_dir("tree");
  g_autofree char *deep = path_in("tree/a/b/c");
  const char *mk[] = {"/bin/mkdir", "-p", deep, NULL};
  const char *rw[] = {"--allow-write", dir, NULL};
  /* The directories above the grant exist and may be examined: making
   * them answers EEXIST, as it does outside. */
  result r = sbx_run(rw, mk);
  ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
  assert_lacks(r.err, "sbx: denied");
  result_clear(&r);
  ck_assert(g_file_test(deep, G_FILE_TEST_IS_DIR));

  /* A directory outside the grants: the hint is that directory, and
   * taking it works. */
  g_autofree char *other = path_in("other");
  const char *mk2[] = {"/bin/mkdir", other, NULL};
  g_autofree char *line = g_strdup_printf(
      "sbx: denied mkdir %s (allow with --allow-write %s)", other, other);
  expect(sbx_run_explain(NULL, mk2), 1, NULL, line);
  const char *hinted[] = {"--allow-write", other, NULL};
  expect(sbx_run(hinted, mk2), 0, NULL, NULL);
  ck_assert(g_file_test(other, G_FILE_TEST_IS_DIR));
}
END_TEST

START_TEST(a_shell_looking_up_a_program_is_hinted_with_allow_exec) {
  const char *sh[] = {"/bin/sh", "-c", "sort </dev/null && echo sorted", NULL};
  /* A directory of PATH the program is not in comes first: its refusal
   * is printed, but the summary offers only what finds the program. */
  g_autofree char *empty = make_dir("bin-without-sort");
  g_autofree char *path = g_strdup_printf("PATH=%s:/usr/bin:/bin", empty);
  const char *env[] = {"--setenv", path, NULL};
  result r = sbx_run_explain(env, sh);
  ck_assert_int_ne(r.status, 0);
  assert_contains(r.err,
                  "sbx: denied stat /usr/bin/sort (allow with "
                  "--allow-exec)");
  g_autofree char *searched = g_strdup_printf(
      "sbx: denied stat %s/sort (allow with --allow-read %s)", empty, empty);
  assert_contains(r.err, searched);
  const char *summary = strstr(r.err, "sbx: to allow them:");
  ck_assert_ptr_nonnull(summary);
  assert_contains(summary, "--allow-exec");
  assert_lacks(summary, empty);
  assert_lacks(r.err, "--allow-read /usr/bin/sort");
  result_clear(&r);
  const char *x[] = {"--setenv", path, "--allow-exec", NULL};
  expect(sbx_run(x, sh), 0, "sorted", NULL);
  /* With --allow-exec the program is found and runs; when the script
   * then fails for another reason, the summary offers what that needs,
   * not the directories the lookup passed. */
  g_autofree char *data = make_file("sort-me", "b\na\n");
  g_autofree char *script = g_strdup_printf("sort '%s' && echo sorted", data);
  const char *sh_data[] = {"/bin/sh", "-c", script, NULL};
  const char *x_explain[] = {"--explain", "--setenv", path, "--allow-exec",
                             NULL};
  r = sbx_run(x_explain, sh_data);
  ck_assert_int_ne(r.status, 0);
  assert_contains(r.err, searched);
  summary = strstr(r.err, "sbx: to allow them:");
  ck_assert_ptr_nonnull(summary);
  g_autofree char *needed = g_strdup_printf("--allow-read %s", data);
  assert_contains(summary, needed);
  assert_lacks(summary, empty);
  result_clear(&r);
  /* A program found and run that then runs a file of the same name
   * outside the grants (a wrapper script, as Debian's /usr/bin/7z): that
   * refusal is no lookup, and the summary offers what runs it. */
  g_autofree char *wrapper_dir = make_dir("wrapper");
  g_autofree char *inner_dir = make_dir("wrapped");
  g_autofree char *inner = make_file("wrapped/tool", "#!/bin/sh\necho inner\n");
  ck_assert_int_eq(chmod(inner, 0755), 0);
  g_autofree char *wrapper_text =
      g_strdup_printf("#!/bin/sh\nexec %s \"$@\"\n", inner);
  g_autofree char *wrapper = make_file("wrapper/tool", wrapper_text);
  ck_assert_int_eq(chmod(wrapper, 0755), 0);
  g_autofree char *wrapper_path =
      g_strdup_printf("PATH=%s:/usr/bin:/bin", wrapper_dir);
  const char *run_tool[] = {"/bin/sh", "-c", "tool", NULL};
  const char *wrapped[] = {"--explain",  "--allow-exec", "--setenv",
                           wrapper_path, "--allow-read", wrapper_dir,
                           NULL};
  r = sbx_run(wrapped, run_tool);
  ck_assert_int_ne(r.status, 0);
  summary = strstr(r.err, "sbx: to allow them:");
  ck_assert_msg(summary != NULL, "%s", r.err);
  g_autofree char *runs_inner = g_strdup_printf("--allow-read %s", inner);
  assert_contains(summary, runs_inner);
  result_clear(&r);
  const char *hinted[] = {"--allow-exec", "--setenv",  wrapper_path,
                          "--allow-read", wrapper_dir, "--allow-read",
                          inner,          NULL};
  expect(sbx_run(hinted, run_tool), 0, "inner", NULL);
}
END_TEST

/* ---- links ----------------------------------------------------------------
 */

/* src/ with a file, a symbolic link to it and a hard link of it, and
 * src.tar of it, made outside the sandbox. */
static char *tree_with_links(void) {
  g_autofree char *src = make_dir("src");
  g_autofree char *a = make_file("src/a", "data\n");
  g_autofree char *l = path_in("src/l");
  g_autofree char *h = path_in("src/h");
  ck_assert_int_eq(symlink("a", l), 0);
  ck_assert_int_eq(link(a, h), 0);
  g_autofree char *dir = path_in("");
  char *tar = path_in("src.tar");
  const char *mk[] = {"/bin/tar", "-C", dir, "-cf", tar, "src", NULL};
  expect(run(mk), 0, NULL, NULL);
  return tar;
}

static void expect_links(const char *root) {
  g_autofree char *l = g_build_filename(root, "src", "l", NULL);
  g_autofree char *h = g_build_filename(root, "src", "h", NULL);
  g_autofree char *target = g_file_read_link(l, NULL);
  ck_assert_ptr_nonnull(target);
  ck_assert_str_eq(target, "a");
  g_autofree char *text = NULL;
  ck_assert(g_file_get_contents(h, &text, NULL, NULL));
  ck_assert_str_eq(text, "data\n");
}

START_TEST(tar_extracts_symbolic_and_hard_links_into_a_write_grant) {
  g_autofree char *tar = tree_with_links();
  g_autofree char *out = make_dir("out");
  const char *x[] = {"/bin/tar", "-C", out, "-xf", tar, NULL};
  const char *opts[] = {"--allow-read", tar, "--allow-write", out, NULL};
  expect(sbx_run(opts, x), 0, NULL, NULL);
  expect_links(out);
}
END_TEST

START_TEST(cp_a_copies_a_tree_with_links_into_a_write_grant) {
  g_autofree char *tar = tree_with_links();
  g_autofree char *src = path_in("src");
  g_autofree char *out = make_dir("copy");
  g_autofree char *dst = g_build_filename(out, "src", NULL);
  const char *cp[] = {"/bin/cp", "-a", src, dst, NULL};
  const char *opts[] = {"--allow-read", src, "--allow-write", out, NULL};
  expect(sbx_run(opts, cp), 0, NULL, NULL);
  expect_links(out);
}
END_TEST

/* A failed run that needs more grants than the summary lists says how
 * many more there are and where all of them are recorded at once. */
START_TEST(a_long_summary_counts_what_it_leaves_out) {
  GPtrArray *cmd = g_ptr_array_new_with_free_func(g_free);
  g_ptr_array_add(cmd, g_strdup("/bin/cat"));
  for (int i = 0; i < 12; i++) {
    g_autofree char *dir = g_strdup_printf("many-%02d", i);
    g_free(make_dir(dir));
    g_autofree char *name = g_strdup_printf("many-%02d/f", i);
    g_ptr_array_add(cmd, make_file(name, "x"));
  }
  g_ptr_array_add(cmd, NULL);
  const char *const *argv = (const char *const *)cmd->pdata;
  expect(run(argv), 0, "xxxxxxxxxxxx", NULL); /* control */
  const char *explain[] = {"--explain", NULL};
  result r = sbx_run(explain, argv);
  ck_assert_int_ne(r.status, 0);
  assert_contains(r.err, "sbx: to allow them: --allow-read ");
  assert_contains(r.err, " ...\nsbx: (2 more options; sbx-learn -o NAME -- ");
  result_clear(&r);
  g_ptr_array_free(cmd, TRUE);
}
END_TEST

/* A grant named through a link on its way (Debian's
 * /usr/share/perl/5.36 -> 5.36.0) reaches its object by that name in
 * both modes, a file and a directory alike; the link shows nothing else
 * of its target. */
START_TEST(a_grant_named_through_a_link_is_reached_by_that_name) {
  g_autofree char *top = make_dir("through");
  g_autofree char *real = make_dir("through/real");
  g_autofree char *sub = make_dir("through/real/sub");
  g_autofree char *f = make_file("through/real/sub/f", "granted");
  g_autofree char *g = make_file("through/real/sub/g", "not granted");
  g_autofree char *link = path_in("through/v");
  ck_assert_int_eq(symlink("real", link), 0);
  g_autofree char *by_link = path_in("through/v/sub/f");
  g_autofree char *other = path_in("through/v/sub/g");
  g_autofree char *dir_by_link = path_in("through/v/");
  g_autofree char *probe = probe_path();
  const char *read_f[] = {probe, "read", by_link, NULL};
  const char *read_g[] = {probe, "read", other, NULL};
  /* Control: outside, both read through the link. */
  expect(run(read_f), 0, "data=granted", NULL);
  expect(run(read_g), 0, "data=not granted", NULL);
  const char *file_grant[] = {"--allow-read", by_link, NULL};
  expect(sbx_run(file_grant, read_f), 0, "data=granted", NULL);
  result r = sbx_run(file_grant, read_g);
  ck_assert_msg(r.status == 1, "status %d: %s%s", r.status, r.out, r.err);
  assert_lacks(r.out, "data=");
  result_clear(&r);
  const char *dir_grant[] = {"--allow-read", dir_by_link, NULL};
  expect(sbx_run(dir_grant, read_f), 0, "data=granted", NULL);
  expect(sbx_run(dir_grant, read_g), 0, "data=not granted", NULL);
}
END_TEST

START_TEST(a_refused_link_names_its_target_and_the_hint_allows_it) {
  g_autofree char *dir = make_dir("granted");
  g_autofree char *other = make_dir("elsewhere");
  g_autofree char *target = make_file("elsewhere/target", "through the link");
  g_autofree char *link = path_in("granted/link");
  ck_assert_int_eq(symlink(target, link), 0);
  g_autofree char *probe = probe_path();
  const char *cmd[] = {probe, "read", link, NULL};
  /* Control: outside the sandbox the link reads its target. */
  expect(run(cmd), 0, "data=through the link", NULL);
  const char *ro[] = {"--allow-read", dir, NULL};
  g_autofree char *line = g_strdup_printf(
      "sbx: denied open %s, a link to %s (allow with --allow-read %s)", link,
      target, target);
  expect(sbx_run_explain(ro, cmd), 1, "errno=2\n", line);
  const char *hinted[] = {"--allow-read", dir, "--allow-read", target, NULL};
  result r = sbx_run(hinted, cmd);
  ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
  assert_contains(r.out, "data=through the link");
  assert_lacks(r.err, "sbx: denied");
  result_clear(&r);
}
END_TEST

/* ---- job control ----------------------------------------------------------
 */

/* Reads the terminal's master until needle has been seen (a Check
 * timeout ends a test that waits forever). */
static void read_until(int master, const char *needle, GString *seen) {
  while (!strstr(seen->str, needle)) {
    char buf[256];
    ssize_t n = read(master, buf, sizeof(buf));
    if (n < 0 && errno == EINTR)
      continue;
    ck_assert_msg(n > 0, "terminal ended before '%s':\n%s", needle, seen->str);
    g_string_append_len(seen, buf, n);
  }
}

/* A shell's part, in the child that leads the terminal's session: runs
 * argv as a foreground job in a process group of its own; when the job
 * stops, takes the terminal back and stops itself (as an interactive
 * shell reports the stop to its user); continued, gives the job the
 * terminal again and continues it, as `fg` does; exits with the job's
 * status. */
static _Noreturn void shell_for_job(int tty, const char *const *argv) {
  signal(SIGTTOU, SIG_IGN);
  pid_t job = fork();
  if (job == 0) {
    setpgid(0, 0);
    tcsetpgrp(tty, getpid());
    signal(SIGTTOU, SIG_DFL);
    dup2(tty, 0);
    dup2(tty, 1);
    dup2(tty, 2);
    execv(argv[0], (char *const *)argv);
    _exit(98);
  }
  setpgid(job, job);
  tcsetpgrp(tty, job);
  for (;;) {
    int st;
    if (waitpid(job, &st, WUNTRACED) != job)
      _exit(97);
    if (!WIFSTOPPED(st))
      _exit(WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
    tcsetpgrp(tty, getpgrp());
    raise(SIGSTOP);
    tcsetpgrp(tty, job);
    kill(-job, SIGCONT);
  }
}

/* A shell (shell_for_job) leading the session of a new terminal, running
 * argv as its foreground job; *master gets the terminal's master. */
static pid_t shell_on_a_terminal(const char *const *argv, int *master) {
  int tty;
  ck_assert_int_eq(openpty(master, &tty, NULL, NULL, NULL), 0);
  pid_t shell = fork();
  ck_assert_int_ge(shell, 0);
  if (shell == 0) {
    close(*master);
    setsid();
    ioctl(tty, TIOCSCTTY, 0);
    shell_for_job(tty, argv);
  }
  close(tty);
  return shell;
}

/* argv as a shell's foreground job on a new terminal: Ctrl-Z typed, the
 * job continued as `fg` does, then a line typed. */
static void ctrl_z_then_fg(const char *const *argv) {
  int master;
  pid_t shell = shell_on_a_terminal(argv, &master);
  g_autoptr(GString) seen = g_string_new(NULL);
  read_until(master, "ready", seen);
  /* The program is the foreground job of the terminal it sees. */
  assert_contains(seen->str, "foreground=yes");
  ck_assert_int_eq(write(master, "\x1a", 1), 1);
  read_until(master, "stopping", seen);
  int st;
  ck_assert_int_eq(waitpid(shell, &st, WUNTRACED), shell);
  ck_assert_msg(WIFSTOPPED(st), "the job did not stop: %x", st);
  /* Stopped, the terminal is as the shell left it, and the shell's. */
  struct termios tio;
  ck_assert_int_eq(tcgetattr(master, &tio), 0);
  ck_assert(tio.c_lflag & ICANON);
  ck_assert_int_eq(tcgetpgrp(master), shell);
  ck_assert_int_eq(kill(shell, SIGCONT), 0);
  read_until(master, "continued", seen);
  ck_assert_int_eq(write(master, "hello\n", 6), 6);
  read_until(master, "got=hello", seen);
  ck_assert_int_eq(waitpid(shell, &st, 0), shell);
  ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %x:\n%s", st,
                seen->str);
  ck_assert_int_eq(tcgetattr(master, &tio), 0);
  ck_assert(tio.c_lflag & ICANON);
  close(master);
}

/* argv as the foreground job of a new terminal it has as its controlling
 * terminal; what the terminal showed once argv ended with status 0. */
static char *on_a_terminal(const char *const *argv) {
  int master;
  pid_t shell = shell_on_a_terminal(argv, &master);
  GString *seen = g_string_new(NULL);
  for (;;) {
    char buf[256];
    ssize_t n = read(master, buf, sizeof(buf));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break; /* EIO: every side of the terminal closed */
    g_string_append_len(seen, buf, n);
  }
  int st;
  ck_assert_int_eq(waitpid(shell, &st, 0), shell);
  ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %x:\n%s", st,
                seen->str);
  close(master);
  return g_string_free(seen, FALSE);
}

/* /dev/tty is the program's own terminal in both modes: the one sbx-run
 * gave it, never the terminal sbx-run (or its supervisor) runs on, and
 * none without a terminal. The program finds its name (ttyname, tty):
 * in the default mode it is a terminal of the sandbox's own devpts, also
 * where a read grant shows the host's /dev. */
START_TEST(dev_tty_is_the_programs_own_terminal) {
  g_autofree char *probe = probe_path();
  /* Control: outside the sandbox, /dev/tty is the terminal on stdin. */
  const char *plain[] = {probe, "devtty", NULL};
  g_autofree char *outside = on_a_terminal(plain);
  assert_contains(outside, "devtty=stdin's");
  assert_contains(outside, "ttyname=/dev/pts/");
  assert_contains(outside, "through /dev/tty");
  struct stat host;
  ck_assert_int_eq(stat("/dev/pts", &host), 0);
  g_autofree char *host_instance = g_strdup_printf(
      "instance=%u:%u\n", major(host.st_dev), minor(host.st_dev));
  g_autofree char *bin = sbx_run_path();
  for (int all = 0; all <= 1; all++) {
    g_autoptr(GPtrArray) argv = g_ptr_array_new();
    g_ptr_array_add(argv, bin);
    if (sbx_run_explaining())
      g_ptr_array_add(argv, "--explain");
    if (all) {
      g_ptr_array_add(argv, "-r");
      g_ptr_array_add(argv, "/");
    }
    g_ptr_array_add(argv, "--");
    g_ptr_array_add(argv, probe);
    g_ptr_array_add(argv, "devtty");
    g_ptr_array_add(argv, NULL);
    g_autofree char *inside = on_a_terminal((const char *const *)argv->pdata);
    assert_contains(inside, "devtty=stdin's");
    assert_contains(inside, "ttyname=/dev/pts/");
    if (sbx_run_kernel_decides())
      assert_lacks(inside, host_instance);
    assert_contains(inside, "through /dev/tty");
    assert_lacks(inside, "sbx: denied");
  }
  /* No terminal: none to open, as outside. */
  result r = sbx_run(NULL, plain);
  ck_assert_msg(r.status == 1, "status %d: %s%s", r.status, r.out, r.err);
  g_autofree char *enxio = g_strdup_printf("errno=%d\n", ENXIO);
  assert_contains(r.out, enxio);
  result_clear(&r);
}
END_TEST

START_TEST(ctrl_z_stops_the_program_and_fg_continues_it) {
  g_autofree char *probe = probe_path();
  /* Control: the probe on its own terminal, outside the sandbox. */
  const char *plain[] = {probe, "job", NULL};
  ctrl_z_then_fg(plain);
  g_autofree char *bin = sbx_run_path();
  const char *sandboxed[] = {bin, "--", probe, "job", NULL};
  ctrl_z_then_fg(sandboxed);
}
END_TEST

START_TEST(sigtstp_sent_to_sbx_run_stops_the_program_and_sigcont_resumes_it) {
  g_autofree char *bin = sbx_run_path();
  g_autofree char *probe = probe_path();
  int in[2], out[2];
  ck_assert_int_eq(pipe(in), 0);
  ck_assert_int_eq(pipe(out), 0);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    dup2(in[0], 0);
    dup2(out[1], 1);
    close(in[1]);
    close(out[0]);
    execl(bin, bin, "--", probe, "job", (char *)NULL);
    _exit(98);
  }
  close(in[0]);
  close(out[1]);
  g_autoptr(GString) seen = g_string_new(NULL);
  read_until(out[0], "ready", seen);
  /* No terminal: the stop comes as a signal, as from `kill -TSTP`. */
  ck_assert_int_eq(kill(pid, SIGTSTP), 0);
  read_until(out[0], "stopping", seen);
  int st;
  ck_assert_int_eq(waitpid(pid, &st, WUNTRACED), pid);
  ck_assert(WIFSTOPPED(st));
  ck_assert_int_eq(kill(pid, SIGCONT), 0);
  read_until(out[0], "continued", seen);
  ck_assert_int_eq(write(in[1], "x\n", 2), 2);
  read_until(out[0], "got=x", seen);
  ck_assert_int_eq(waitpid(pid, &st, 0), pid);
  ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  close(in[1]);
  close(out[0]);
}
END_TEST

/* ---- what a run prints --------------------------------------------------- */

START_TEST(a_successful_run_prints_only_the_programs_output) {
  /* What a run without --explain prints; --explain prints each refusal
   * as it happens instead (tested below). */
  if (sbx_run_explaining())
    return;
  g_autofree char *audit = path_in("audit.jsonl");
  /* The shell survives a refused open, and says so on its own. */
  const char *sh[] = {"/bin/sh", "-c",
                      "{ read x < /etc/shadow; } 2>/dev/null; echo survived",
                      NULL};
  result r = sbx_run(NULL, sh);
  ck_assert_int_eq(r.status, 0);
  ck_assert_str_eq(r.out, "survived\n");
  ck_assert_str_eq(r.err, "");
  result_clear(&r);
  /* The refusal is still there for whoever asks. */
  const char *explain[] = {"--explain", NULL};
  expect(sbx_run(explain, sh), 0, "survived",
         "sbx: denied open /etc/shadow (allow with --allow-read /etc/shadow)");
  const char *v[] = {"-v", "--audit", audit, NULL};
  expect(sbx_run(v, sh), 0, "survived", "sbx: denied open /etc/shadow");
  g_autofree char *log = NULL;
  ck_assert(g_file_get_contents(audit, &log, NULL, NULL));
  assert_contains(log, "\"decision\":\"deny\"");
  assert_contains(log, "\"path\":\"/etc/shadow\"");
}
END_TEST

START_TEST(a_failing_run_ends_with_a_summary_of_what_to_allow) {
  /* What a run without --explain prints; --explain prints each refusal
   * as it happens instead (tested below). */
  if (sbx_run_explaining())
    return;
  const char *sh[] = {"/bin/sh", "-c",
                      "{ read x < /etc/shadow; } 2>/dev/null; exit 3", NULL};
  /* The summary is the supervisor's; --audit chooses it without
   * --explain (the default mode prints one line, sbx_run_kernel_test). */
  g_autofree char *audit = path_in("audit.jsonl");
  const char *opts[] = {"--audit", audit, NULL};
  result r = sbx_run(opts, sh);
  ck_assert_int_eq(r.status, 3);
  assert_contains(r.err, "sbx: the program ended with status 3 after ");
  assert_contains(r.err,
                  "\nsbx: denied open /etc/shadow (allow with "
                  "--allow-read /etc/shadow)\n");
  const char *last = strstr(r.err, "sbx: to allow them: ");
  ck_assert_ptr_nonnull(last);
  assert_contains(last, " --allow-read /etc/shadow");
  result_clear(&r);

  /* Many refusals: the last few, and how to see the rest. */
  GString *script = g_string_new(NULL);
  for (int i = 0; i < 15; i++) {
    g_autofree char *name = g_strdup_printf("probe-%d", i);
    g_autofree char *file = make_file(name, "x");
    g_string_append_printf(script, "{ read x < %s; } 2>/dev/null; ", file);
  }
  /* A look at a name that is not there changes nothing a grant could:
   * not in the summary. */
  g_string_append(script, "{ read x < /etc/sbx-absent; } 2>/dev/null; ");
  g_string_append(script, "exit 4");
  const char *many[] = {"/bin/sh", "-c", script->str, NULL};
  r = sbx_run(opts, many);
  g_string_free(script, TRUE);
  ck_assert_int_eq(r.status, 4);
  assert_contains(r.err, "earlier not shown; --explain shows each");
  g_autofree char *last_probe = path_in("probe-14");
  g_autofree char *early_probe = path_in("probe-4");
  g_autofree char *last_line =
      g_strdup_printf("sbx: denied open %s (", last_probe);
  g_autofree char *early_line =
      g_strdup_printf("sbx: denied open %s (", early_probe);
  assert_contains(r.err, last_line);
  assert_lacks(r.err, early_line);
  assert_lacks(r.err, "/etc/sbx-absent");
  result_clear(&r);
}
END_TEST

/* The summary's last line is the fewest grants that change the outcome:
 * not the directory of a name probed that does not exist (the program
 * finds it missing with the grant too), not a connect to a socket file
 * that is not there (libc's probe of nscd's, under id), not a grant
 * inside another one offered. The directories above the loader's files stay
 * stat-able, as the default mode's tree holds them. */
START_TEST(the_summary_offers_only_grants_that_change_the_outcome) {
  g_autofree char *dir = make_dir("wanted");
  g_autofree char *file = make_file("wanted/f", "x");
  g_autofree char *probed = make_dir("probed");
  g_autofree char *missing = path_in("probed/optional.cfg");
  g_autofree char *script = g_strdup_printf(
      "test -d /usr/lib && test -d /etc && echo dirs-seen; id -un >/dev/null; "
      "{ ls '%s'; read x < '%s'; read y < '%s'; } 2>/dev/null; exit 3",
      dir, file, missing);
  const char *sh[] = {"/bin/sh", "-c", script, NULL};
  /* From "/", without the suite's $PWD, which a shell would stat. */
  const char *opts[] = {"--explain", "--allow-exec", "--unsetenv", "PWD", NULL};
  result r = sbx_run_at("/", -1, -1, opts, sh);
  ck_assert_int_eq(r.status, 3);
  assert_contains(r.out, "dirs-seen");
  /* Every refusal is printed... */
  g_autofree char *l1 = g_strdup_printf("sbx: denied open %s (", file);
  g_autofree char *l2 = g_strdup_printf("sbx: denied open %s (", missing);
  assert_contains(r.err, l1);
  assert_contains(r.err, l2);
  /* ...and the summary offers the directory alone. */
  const char *last = strstr(r.err, "sbx: to allow them: ");
  ck_assert_ptr_nonnull(last);
  g_autofree char *want =
      g_strdup_printf("sbx: to allow them: --allow-read %s\n", dir);
  ck_assert_msg(strcmp(last, want) == 0, "summary not %s in:\n%s", want, r.err);
  result_clear(&r);
  /* Taking it is enough. */
  const char *granted[] = {"--explain", "--allow-exec", "--unsetenv",
                           "PWD",       "--allow-read", dir,
                           NULL};
  r = sbx_run_at("/", -1, -1, granted, sh);
  ck_assert_int_eq(r.status, 3);
  assert_contains(r.out, "f\n");
  assert_lacks(r.err, "to allow them");
  result_clear(&r);
}
END_TEST

static Suite *sbx_run_suite(void) {
  Suite *s = suite_create("sbx-run");
  TCase *basic = tcase_create("status");
  tcase_add_checked_fixture(basic, tool_setup, tool_teardown);
  tcase_set_timeout(basic, 60);
  tcase_add_test(basic, sbx_run_returns_the_programs_exit_status);
  tcase_add_test(basic, sbx_run_reports_a_program_killed_by_sigterm_as_143);
  tcase_add_test(basic, sbx_run_forwards_sigterm_and_sigint_to_the_program);
  tcase_add_test(basic, nothing_the_program_started_runs_after_sbx_run_returns);
  tcase_add_test(basic,
                 sbx_run_exits_127_for_a_missing_program_and_126_for_a_file);
  tcase_add_test(basic, ctrl_z_stops_the_program_and_fg_continues_it);
  tcase_add_test(basic, dev_tty_is_the_programs_own_terminal);
  tcase_add_test(
      basic, sigtstp_sent_to_sbx_run_stops_the_program_and_sigcont_resumes_it);
  suite_add_tcase(s, basic);

  TCase *progs = tcase_create("programs");
  tcase_add_checked_fixture(progs, tool_setup, tool_teardown);
  tcase_set_timeout(progs, 120);
  tcase_add_test(progs, ls_lists_an_allowed_directory_but_not_a_forbidden_one);
  tcase_add_test(
      progs, fchdir_to_an_opened_directory_leaves_a_working_directory_named);
  tcase_add_test(progs,
                 attributes_of_sockets_and_fifos_are_read_like_their_stat);
  tcase_add_test(progs, attributes_a_stat_shows_need_no_read_grant);
  tcase_add_test(progs,
                 python_reads_an_allowed_file_but_not_etc_shadow_or_a_canary);
  tcase_add_test(
      progs, sqlite_creates_a_database_only_in_an_allowed_writable_directory);
  tcase_add_test(progs, tar_and_gzip_round_trip_in_a_writable_directory);
  tcase_add_test(progs,
                 a_shell_script_runs_other_programs_only_with_allow_exec);
  tcase_add_test(
      progs, an_exec_outside_the_read_grants_is_named_with_the_grant_it_needs);
  tcase_add_test(
      progs,
      a_program_found_through_the_alternatives_system_runs_with_allow_exec);
  tcase_add_test(progs, cp_mv_and_install_into_a_write_grant_work);
  tcase_add_test(progs, an_o_path_open_is_decided_as_a_read);
  tcase_add_test(progs, make_runs_a_recipe);
  tcase_add_test(progs,
                 tar_extracts_symbolic_and_hard_links_into_a_write_grant);
  tcase_add_test(progs, cp_a_copies_a_tree_with_links_into_a_write_grant);
  tcase_add_test(progs, search_permission_on_an_allowed_directory_is_not_exec);
  tcase_add_test(progs, git_init_makes_a_repository_in_a_writable_directory);
  tcase_add_test(
      progs, identity_calls_that_change_nothing_are_allowed_and_others_refused);
  suite_add_tcase(s, progs);

  TCase *sec = tcase_create("security");
  tcase_add_checked_fixture(sec, tool_setup, tool_teardown);
  tcase_set_timeout(sec, 240);
  tcase_add_test(sec, a_path_flipped_during_100k_opens_never_opens_the_canary);
  tcase_add_test(sec, the_program_never_runs_when_the_supervisor_cannot_start);
  tcase_add_test(sec,
                 tiocsti_cannot_type_into_the_terminal_the_program_was_given);
  tcase_add_test(sec, the_program_runs_in_a_new_session);
  tcase_add_test(sec,
                 socket_af_inet_is_the_sandboxs_own_or_refused_without_net);
  tcase_add_test(
      sec, an_abstract_unix_socket_outside_is_unreachable_with_or_without_net);
  tcase_add_test(sec, the_program_has_no_capabilities_and_no_new_privs);
  tcase_add_test(sec, the_program_keeps_the_callers_identity_without_overrides);
  tcase_add_test(sec, user_chooses_another_identity_and_only_root_may);
  tcase_add_test(sec, the_program_sees_its_own_accounts_and_no_others);
  tcase_add_test(sec, localhost_and_the_sandboxs_hostname_resolve);
  tcase_add_test(sec, a_time_zone_named_in_tz_is_read_without_a_grant);
  tcase_add_test(sec, sbx_run_inside_sbx_run_exits_125_and_says_why);
  tcase_add_test(sec, pseudo_terminals_are_the_programs_own_and_no_others);
  tcase_add_test(sec, a_failing_supervisor_stops_the_sandbox_and_sbx_run_exits);
  suite_add_tcase(s, sec);

  TCase *opts = tcase_create("options");
  tcase_add_checked_fixture(opts, tool_setup, tool_teardown);
  tcase_set_timeout(opts, 60);
  tcase_add_test(opts, the_audit_file_holds_one_json_object_per_decision);
  tcase_add_test(opts, a_policy_layer_narrows_and_never_widens);
  tcase_add_test(
      opts, a_policy_layer_that_needs_the_listener_or_forbids_exec_is_refused);
  tcase_add_test(
      opts, a_layer_that_hands_calls_to_a_tracer_is_refused_under_allow_ptrace);
  tcase_add_test(opts, tracing_needs_allow_ptrace_and_the_refusal_names_it);
  tcase_add_test(opts, a_profile_grants_what_its_broker_rules_name);
  tcase_add_test(opts,
                 an_exact_directory_rule_grants_its_listing_not_its_files);
  tcase_add_test(opts, environment_options_shape_the_programs_environment);
  tcase_add_test(opts, a_successful_run_prints_only_the_programs_output);
  tcase_add_test(opts, a_failing_run_ends_with_a_summary_of_what_to_allow);
  tcase_add_test(opts, an_empty_path_is_refused_by_every_path_option);
  tcase_add_test(opts,
                 a_missing_file_is_hinted_with_a_directory_sbx_run_accepts);
  tcase_add_test(opts, mkdir_p_inside_a_write_grant_prints_no_denial);
  tcase_add_test(opts, a_refused_link_names_its_target_and_the_hint_allows_it);
  tcase_add_test(opts, a_grant_named_through_a_link_is_reached_by_that_name);
  tcase_add_test(opts, a_long_summary_counts_what_it_leaves_out);
  tcase_add_test(opts, a_shell_looking_up_a_program_is_hinted_with_allow_exec);
  tcase_add_test(opts, a_descriptor_reopened_by_name_keeps_the_access_it_has);
  tcase_add_test(opts, a_search_path_goes_on_past_names_outside_the_grants);
  tcase_add_test(opts, the_summary_offers_only_grants_that_change_the_outcome);
  tcase_add_test(opts, an_inotify_watch_needs_read_on_what_it_watches);
  tcase_add_test(opts,
                 a_name_written_as_a_directory_is_read_as_the_kernel_reads_it);
  tcase_add_test(opts, the_programs_own_proc_entries_answer_as_the_kernels);
  tcase_add_loop_test(
      opts, a_fifo_the_program_makes_opens_as_the_kernel_opens_it, 0, 2);
  tcase_add_test(opts, a_fifo_in_a_grant_meets_its_peer_on_the_host);
  tcase_add_test(opts,
                 a_dotdot_after_a_link_leads_where_the_kernels_walk_leads);
  tcase_add_test(opts,
                 a_regular_file_is_made_by_mknod_where_a_create_is_allowed);
  tcase_add_test(opts, the_setgid_bit_is_set_on_a_directory_and_no_file);
  suite_add_tcase(s, opts);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(sbx_run_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
