/* sbx-learn end to end: real programs (ls, cat, python3, dash and
 * sbx_run_probe) are learned by the sbx-learn binary of the build, then
 * run under sbx-run with the learned profile. Each learned run is
 * compared with the program's own output outside any sandbox, and each
 * refusal is paired with the same operation succeeding without the
 * learned profile or outside the sandbox.
 *
 * The learned runs use sbx-run --explain, as sbx-learn's own check does:
 * the tests read the refusals it names. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib.h>

#include "sandbox/kernel/seccomp/bpf.h"
#include "sandbox/policy/compiler.h"
#include "sandbox/policy/builtin/profile.h"
#include "sandbox/policy/parser.h"
#include "sandbox/runner/baseline.h"
#include "sandbox/runner/learn_write.h"
#include "sandbox/runner/stacked.h"
#include "sandbox/tests/runner/tool_run.h"

/* sbx-learn -o NAME -- CMD...: asserts that it succeeded, wrote both
 * files and said that the result is only as complete as the run; returns
 * the program's stdout. */
static char *learn_opts(const char *name, const char *const *cmd, bool verify) {
  const char *opts[] = {"-o", name, verify ? NULL : "--no-verify", NULL};
  result r = tool_run("sbx-learn", opts, cmd);
  ck_assert_msg(r.status == 0, "sbx-learn: status %d: %s", r.status, r.err);
  assert_contains(r.err, "only as complete as the run that produced it");
  g_autofree char *policy = g_strconcat(name, ".policy", NULL);
  g_autofree char *profile = g_strconcat(name, ".profile", NULL);
  ck_assert(g_file_test(policy, G_FILE_TEST_IS_REGULAR));
  ck_assert(g_file_test(profile, G_FILE_TEST_IS_REGULAR));
  char *out = g_steal_pointer(&r.out);
  result_clear(&r);
  return out;
}

static char *learn(const char *name, const char *const *cmd) {
  return learn_opts(name, cmd, true);
}

/* For a command that cannot run twice alike (it makes a file that must
 * not exist, or binds a socket file it leaves behind): no rerun. */
static char *learn_once(const char *name, const char *const *cmd) {
  return learn_opts(name, cmd, false);
}

static result run_learned(const char *name, const char *const *cmd) {
  g_autofree char *profile = g_strconcat(name, ".profile", NULL);
  const char *opts[] = {"--profile", profile, NULL};
  return sbx_run(opts, cmd);
}

static char *file_text(const char *path) {
  char *text = NULL;
  ck_assert(g_file_get_contents(path, &text, NULL, NULL));
  return text;
}

/* The learned profile's broker rules, as sbx-run will read them. */
static char **learned_rules(const char *name) {
  g_autofree char *profile = g_strconcat(name, ".profile", NULL);
  GError *error = NULL;
  sbx_profile *p = sbx_profile_load(profile, NULL, &error);
  ck_assert_msg(p != NULL, "%s", error ? error->message : "");
  char **rules = g_strdupv(p->broker_rules);
  sbx_profile_free(p);
  return rules;
}

static bool has_rule(char **rules, const char *rule) {
  return rules && g_strv_contains((const char *const *)rules, rule);
}

static sbx_policy *learned_policy(const char *name) {
  g_autofree char *path = g_strconcat(name, ".policy", NULL);
  GError *error = NULL;
  sbx_policy *pol = sbx_policy_parse_file(path, &error);
  ck_assert_msg(pol != NULL, "%s", error ? error->message : "");
  sbx_bpf_program prog = {0};
  ck_assert_msg(sbx_bpf_compile(pol, &prog, &error), "%s",
                error ? error->message : "");
  sbx_bpf_program_clear(&prog);
  return pol;
}

static uint32_t eval(const sbx_policy *pol, int nr, uint64_t a0, uint64_t a1,
                     uint64_t a2) {
  struct seccomp_data d = {.nr = nr, .arch = AUDIT_ARCH_X86_64};
  d.args[0] = a0;
  d.args[1] = a1;
  d.args[2] = a2;
  return sbx_policy_eval(pol, &d) & SECCOMP_RET_ACTION_FULL;
}

/* Learns cmd, whose output must be `out`, and runs it again under the
 * learned profile: same status (0), same output. */
static void learn_and_rerun(const char *name, const char *const *cmd,
                            const char *out) {
  g_autofree char *learned_out = learn(name, cmd);
  ck_assert_str_eq(learned_out, out);
  result r = run_learned(name, cmd);
  ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
  ck_assert_str_eq(r.out, out);
  result_clear(&r);
}

/* cmd reads path: it succeeds outside the sandbox (the positive
 * control), and under the learned profile exits with `status` after a
 * denial naming path. Returns the sandboxed run's stderr. */
static char *denied_read(const char *name, const char *const *cmd,
                         const char *path, int status) {
  result r = run(cmd);
  ck_assert_msg(r.status == 0, "outside: status %d: %s", r.status, r.err);
  result_clear(&r);
  r = run_learned(name, cmd);
  ck_assert_int_eq(r.status, status);
  g_autofree char *line = g_strdup_printf("sbx: denied open %s ", path);
  assert_contains(r.err, line);
  char *err = g_steal_pointer(&r.err);
  result_clear(&r);
  return err;
}

/* The "run it with: sbx-run ..." line of sbx-learn's stderr, run as a
 * shell would split it. */
static result run_printed_line(const char *err) {
  const char *tag = "sbx-learn: run it with: sbx-run ";
  const char *at = strstr(err, tag);
  ck_assert_msg(at != NULL, "no command line in:\n%s", err);
  g_autofree char *line =
      g_strndup(at + strlen(tag), strcspn(at + strlen(tag), "\n"));
  g_auto(GStrv) words = NULL;
  ck_assert_msg(g_shell_parse_argv(line, NULL, &words, NULL), "%s", line);
  guint dashes = 0;
  while (words[dashes] && strcmp(words[dashes], "--") != 0)
    dashes++;
  ck_assert_msg(words[dashes] != NULL, "no -- in %s", line);
  g_free(words[dashes]);
  words[dashes] = NULL;
  result r = sbx_run((const char *const *)words,
                     (const char *const *)words + dashes + 1);
  words[dashes] = g_strdup("--");
  return r;
}

/* ---- learn, then run ------------------------------------------------------
 */

START_TEST(ls_learned_on_a_directory_lists_it_again_under_sbx_run) {
  g_autofree char *dir = make_dir("listing");
  g_autofree char *m1 = make_file("listing/first-entry", "1");
  g_autofree char *m2 = make_file("listing/second-entry", "2");
  g_autofree char *name = path_in("ls");
  const char *ls[] = {"/bin/ls", dir, NULL};
  result r = run(ls);
  ck_assert_int_eq(r.status, 0);
  g_autofree char *outside = g_steal_pointer(&r.out);
  result_clear(&r);

  /* Without a profile, sbx-run refuses the directory. */
  expect(sbx_run(NULL, ls), 2, NULL, "sbx: denied");

  learn_and_rerun(name, ls, outside);

  /* The directory was listed, not its parent: that stays refused. */
  g_autofree char *parent = g_path_get_dirname(dir);
  const char *ls_parent[] = {"/bin/ls", parent, NULL};
  g_autofree char *err = denied_read(name, ls_parent, parent, 2);
}
END_TEST

START_TEST(cat_learned_on_one_file_is_denied_etc_shadow_and_a_canary) {
  g_autofree char *data = make_file("input.txt", "learned input\n");
  g_autofree char *other = make_dir("elsewhere");
  (void)other;
  g_autofree char *canary = make_file("elsewhere/canary.txt", "canary\n");
  g_autofree char *name = path_in("cat");
  const char *cat[] = {"/bin/cat", data, NULL};
  const char *cat_canary[] = {"/bin/cat", canary, NULL};
  const char *cat_shadow[] = {"/bin/cat", "/etc/shadow", NULL};

  learn_and_rerun(name, cat, "learned input\n");
  g_autofree char *err = denied_read(name, cat_canary, canary, 1);

  result r = run_learned(name, cat_shadow);
  ck_assert_int_eq(r.status, 1);
  ck_assert_str_eq(r.out, "");
  assert_contains(r.err, "sbx: denied open /etc/shadow");
  result_clear(&r);
}
END_TEST

START_TEST(python_learned_reading_a_file_reads_it_again_and_nothing_else) {
  g_autofree char *data = make_file("data.txt", "sandboxed hello");
  g_autofree char *canary = make_file("canary.txt", "canary");
  g_autofree char *name = path_in("py");
  g_autofree char *read_data =
      g_strdup_printf("print(open('%s').read())", data);
  g_autofree char *read_canary =
      g_strdup_printf("print(open('%s').read())", canary);
  const char *py[] = {"/usr/bin/python3", "-c", read_data, NULL};
  const char *py_canary[] = {"/usr/bin/python3", "-c", read_canary, NULL};

  learn_and_rerun(name, py, "sandboxed hello\n");
  g_autofree char *err = denied_read(name, py_canary, canary, 1);
  assert_contains(err, "FileNotFoundError");

  /* The library directory is folded; nothing is folded up to / or a
   * top-level directory. */
  g_auto(GStrv) rules = learned_rules(name);
  for (char **rule = rules; *rule; rule++) {
    const char *path = strchr(*rule, ' ') + 1;
    ck_assert_msg(strcmp(path, "/") != 0, "rule %s", *rule);
    if (g_str_has_suffix(path, "/")) {
      g_autofree char *trimmed = g_strndup(path, strlen(path) - 1);
      ck_assert_msg(strchr(trimmed + 1, '/') != NULL, "rule %s", *rule);
    }
  }
}
END_TEST

START_TEST(a_program_that_made_a_network_socket_keeps_the_network) {
  g_autofree char *probe = probe_path();
  g_autofree char *name = path_in("net");
  const char *sock[] = {probe, "socket-inet", NULL};
  /* Without the profile the socket is made in the sandbox's own network,
   * or refused where there is none. */
  if (sbx_run_has_own_network())
    expect(sbx_run(NULL, sock), 0, "socket=ok", NULL);
  else
    expect(sbx_run(NULL, sock), 1, "errno=13\n", "sbx: denied socket AF_INET");
  g_autofree char *out = learn(name, sock);
  assert_contains(out, "socket=ok");
  g_autofree char *path = g_strconcat(name, ".policy", NULL);
  g_autofree char *text = file_text(path);
  assert_contains(text, "socket: arg0 == AF_INET\n");
  /* The learned profile keeps the host's network: no network namespace. */
  g_autofree char *profile = g_strconcat(name, ".profile", NULL);
  g_autofree char *ptext = file_text(profile);
  assert_contains(ptext, "enter=user;pid;ipc;uts;mount;cgroup;\n");
  expect(run_learned(name, sock), 0, "socket=ok", NULL);
}
END_TEST

/* A program whose connects all reached its own listener (on a port the
 * kernel picked) talks only to itself: the learned profile keeps the
 * sandbox's own network, not the host's, and the check's rerun and a
 * run with it reach the program's own server again. The control: a
 * program that connected to the host's listener keeps the host's
 * network (a_learned_network_profile_keeps_only_the_ports_used). */
START_TEST(a_program_that_talks_to_itself_over_loopback_needs_no_network) {
  g_autofree char *probe = probe_path();
  g_autofree char *name = path_in("self");
  const char *cmd[] = {probe, "tcp-self", "0", NULL};
  g_autofree char *out = learn(name, cmd);
  assert_contains(out, "exchange=ok");
  g_autofree char *profile = g_strconcat(name, ".profile", NULL);
  g_autofree char *text = file_text(profile);
  assert_contains(text, "enter=user;pid;net;ipc;uts;mount;cgroup;\n");
  assert_lacks(text, "[network]");
  if (sbx_run_has_own_network())
    expect(run_learned(name, cmd), 0, "exchange=ok\nreply=z\n", NULL);
}
END_TEST

/* sbx-run answers clone3 with ENOSYS for libc to fall back to clone: a
 * threaded program learned so (the learning run answers it the same way)
 * starts its threads again under its profile. */
START_TEST(a_threaded_program_learned_starts_its_threads_again) {
  const char *cmd[] = {"/usr/bin/python3", "-c",
                       "import threading\n"
                       "t = threading.Thread(target=print)\n"
                       "t.start(); t.join(); print('joined')\n",
                       NULL};
  g_autofree char *name = path_in("threads");
  g_autofree char *out = learn(name, cmd);
  assert_contains(out, "joined");
  g_autofree char *policy = g_strconcat(name, ".policy", NULL);
  g_autofree char *text = file_text(policy);
  assert_contains(text, "\nclone: ");
  assert_contains(text, "\nclone3: return ENOSYS\n");
  expect(run_learned(name, cmd), 0, "joined", NULL);
}
END_TEST

/* The entries of a listed directory that were only looked at fold into
 * one stat rule below it: a name added later is looked at too, and no
 * file there is read. */
START_TEST(entries_only_looked_at_fold_into_a_stat_rule) {
  g_autofree char *dir = make_dir("looked");
  for (int i = 0; i < 4; i++) {
    g_autofree char *f = g_strdup_printf("looked/f%d", i);
    g_free(make_file(f, "x"));
  }
  const char *du[] = {"/usr/bin/du", "-a", dir, NULL};
  g_autofree char *name = path_in("du");
  learn(name, du);
  g_autofree char *profile = g_strconcat(name, ".profile", NULL);
  g_autofree char *text = file_text(profile);
  g_autofree char *rule = g_strdup_printf("stat %s/", dir);
  assert_contains(text, rule);
  g_autofree char *added = make_file("looked/added-later", "y");
  expect(run_learned(name, du), 0, "looked/added-later", NULL);
  const char *cat[] = {"/bin/cat", added, NULL};
  expect(run(cat), 0, "y", NULL);
  result r = run_learned(name, cat);
  ck_assert_int_ne(r.status, 0);
  assert_lacks(r.out, "y");
  assert_contains(r.err, "Permission denied"); /* the file, not a call */
  result_clear(&r);
}
END_TEST

/* A unix socket file bound and connected to while learning is granted by
 * its path (connect needs the write right on it, bind the create right
 * in its directory), so the program reaches it again. */
START_TEST(a_unix_socket_used_while_learning_is_granted_by_its_path) {
  g_autofree char *dir = make_dir("sockets");
  g_autofree char *sock = path_in("sockets/s.sock");
  g_autofree char *probe = probe_path();
  g_autofree char *name = path_in("unix");
  const char *cmd[] = {probe, "bind", sock, NULL};
  g_autofree char *out = learn_once(name, cmd);
  assert_contains(out, "exchange=ok");
  ck_assert_int_eq(unlink(sock), 0);

  const char *net[] = {"--net", NULL};
  result r = sbx_run(net, cmd);
  ck_assert_int_eq(r.status, 1);
  g_autofree char *line = g_strdup_printf("sbx: denied bind %s", sock);
  assert_contains(r.err, line);
  result_clear(&r);

  g_autofree char *profile = g_strconcat(name, ".profile", NULL);
  const char *learned_net[] = {"--net", "--profile", profile, NULL};
  expect(sbx_run(learned_net, cmd), 0, "exchange=ok", NULL);
}
END_TEST

/* A program that traced its own child (as strace does) is learned with
 * --allow-ptrace on the printed line, which the check's rerun uses; the
 * profile alone (the control) leaves tracing refused. */
START_TEST(a_program_that_traced_is_run_with_allow_ptrace) {
  g_autofree char *probe = probe_path();
  const char *traceme[] = {probe, "traceme", NULL};
  g_autofree char *name = path_in("tracer");
  const char *opts[] = {"-o", name, NULL};
  result r = tool_run("sbx-learn", opts, traceme);
  ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
  g_autofree char *line = g_strdup_printf(
      "--profile %s.profile --allow-ptrace -- %s traceme", name, probe);
  assert_contains(r.err, line);
  assert_contains(r.err, "sbx-learn: checked:");
  result again = run_printed_line(r.err);
  expect(again, 0, "traceme=ok", NULL);
  result_clear(&r);
  g_autofree char *profile = g_strconcat(name, ".profile", NULL);
  const char *only_profile[] = {"--profile", profile, NULL};
  expect(sbx_run(only_profile, traceme), 1, "traceme=refused", NULL);
}
END_TEST

/* The printed command line is the one that works: it carries every
 * sbx-run option the run needed (--allow-exec for a program that ran
 * others; the profile keeps what it can itself), and the same command
 * without that option is refused (the control). */
START_TEST(the_printed_command_line_carries_the_options_the_run_needed) {
  g_autofree char *probe = probe_path();
  g_autofree char *out_dir = make_dir("printed");
  g_autofree char *target = path_in("printed/by-child");
  g_autofree char *script = g_strdup_printf("'%s' write '%s'", probe, target);
  const char *sh[] = {"/bin/sh", "-c", script, NULL};
  g_autofree char *name = path_in("printed-sh");
  /* The probe makes a new file: a rerun would find it there. */
  const char *opts[] = {"-o", name, "--no-verify", NULL};
  result r = tool_run("sbx-learn", opts, sh);
  ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
  assert_contains(r.err, " --allow-exec -- /bin/sh -c ");
  ck_assert_int_eq(unlink(target), 0);
  result again = run_printed_line(r.err);
  ck_assert_msg(again.status == 0, "status %d: %s", again.status, again.err);
  ck_assert_int_eq(access(target, F_OK), 0);
  ck_assert_int_eq(unlink(target), 0);
  result_clear(&again);
  result_clear(&r);
  /* Without --allow-exec the child is not executed. */
  g_autofree char *profile = g_strconcat(name, ".profile", NULL);
  const char *only_profile[] = {"--profile", profile, NULL};
  r = sbx_run(only_profile, sh);
  ck_assert_int_ne(r.status, 0);
  assert_contains(r.err, "sbx: denied exec ");
  ck_assert_int_eq(access(target, F_OK), -1);
  result_clear(&r);

  g_autofree char *dir = make_dir("printed-sockets");
  g_autofree char *sock = path_in("printed-sockets/s.sock");
  g_autofree char *uname = path_in("printed-unix");
  const char *bind[] = {probe, "bind", sock, NULL};
  const char *uopts[] = {"-o", uname, "--no-verify", NULL};
  r = tool_run("sbx-learn", uopts, bind);
  ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
  assert_lacks(r.err, "--allow-exec");
  ck_assert_int_eq(unlink(sock), 0);
  again = run_printed_line(r.err);
  ck_assert_msg(again.status == 0, "status %d: %s", again.status, again.err);
  assert_contains(again.out, "exchange=ok");
  result_clear(&again);
  result_clear(&r);
  ck_assert_int_eq(unlink(sock), 0);

  /* A program that needed neither gets neither. */
  g_autofree char *data = make_file("printed-input", "x");
  g_autofree char *cname = path_in("printed-cat");
  const char *cat[] = {"/bin/cat", data, NULL};
  const char *copts[] = {"-o", cname, NULL};
  r = tool_run("sbx-learn", copts, cat);
  ck_assert_int_eq(r.status, 0);
  assert_lacks(r.err, "--allow-exec");
  assert_lacks(r.err, "--net");
  again = run_printed_line(r.err);
  expect(again, 0, "x", NULL);
  result_clear(&r);
}
END_TEST

/* A directory sbx-run gives each sandbox its own of. */
static bool is_private_dir(const char *dir) {
  return strcmp(dir, "/tmp") == 0 || strcmp(dir, "/dev/shm") == 0;
}

/* Whether a rule names dir or a path below it. */
static bool rule_names(char **rules, const char *dir) {
  size_t n = strlen(dir);
  for (char **rule = rules; rule && *rule; rule++) {
    const char *path = strchr(*rule, ' ') + 1;
    if (strncmp(path, dir, n) == 0 && (path[n] == '/' || path[n] == '\0'))
      return true;
  }
  return false;
}

/* A run that used /tmp and /dev/shm only for names it made and removed
 * again (a FIFO, a file written and read back) learns no rule there: the
 * rerun gets the sandbox's own directories (a rule would make them the
 * host's, where its names would be left behind). A run that read a file
 * of the host's there keeps its rule (the control). */
START_TEST(a_run_that_left_nothing_in_tmp_keeps_the_sandboxs_own_tmp) {
  if (!sbx_run_has_private_dirs())
    return; /* no private /tmp: every run uses the host's */
  g_autofree char *name = path_in("own-tmp");
  const char *sh[] = {"/bin/sh", "-c",
                      "for d in /tmp /dev/shm; do "
                      "mkfifo $d/sbx-learn-fifo-$$ && rm $d/sbx-learn-fifo-$$ "
                      "&& echo x > $d/sbx-learn-file-$$ && "
                      "cat $d/sbx-learn-file-$$ && rm $d/sbx-learn-file-$$ "
                      "|| exit 1; done",
                      NULL};
  g_autofree char *out = learn(name, sh);
  ck_assert_str_eq(out, "x\nx\n");
  g_auto(GStrv) rules = learned_rules(name);
  ck_assert_msg(!rule_names(rules, "/tmp"), "a rule names /tmp");
  ck_assert_msg(!rule_names(rules, "/dev/shm"), "a rule names /dev/shm");
  g_autofree char *profile = g_strconcat(name, ".profile", NULL);
  const char *opts[] = {"--profile", profile, "--allow-exec", NULL};
  expect(sbx_run(opts, sh), 0, "x\nx\n", NULL);

  /* Control: a file of the host's in /tmp, read, is granted by name. */
  char host[] = "/tmp/sbx-learn-host-XXXXXX";
  int fd = mkstemp(host);
  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq(write(fd, "host\n", 5), 5);
  close(fd);
  ck_assert_int_eq(chmod(host, 0644), 0);
  g_autofree char *name2 = path_in("host-tmp");
  const char *cat[] = {"/bin/cat", host, NULL};
  g_autofree char *out2 = learn(name2, cat);
  ck_assert_str_eq(out2, "host\n");
  g_auto(GStrv) rules2 = learned_rules(name2);
  ck_assert_msg(rule_names(rules2, host), "no rule names %s", host);
  ck_assert_int_eq(unlink(host), 0);
}
END_TEST

/* gcc makes its temporary files under random names in /tmp (or
 * $TMPDIR) and probes include and library directories that do not
 * exist. The learned profile grants the temporary directory (none where
 * that is the sandbox's own /tmp), names no random file, and lets the
 * compile run again; without it the same compile is refused (the
 * control). */
START_TEST(gcc_learned_compiling_a_file_compiles_it_again) {
  g_autofree char *src = make_file("hello.c",
                                   "#include <stdio.h>\n"
                                   "int main(void) { puts(\"compiled\"); "
                                   "return 0; }\n");
  g_autofree char *bin = path_in("hello");
  g_autofree char *name = path_in("gcc");
  const char *gcc[] = {"/usr/bin/gcc", "-o", bin, src, NULL};
  const char *opts[] = {"-o", name, NULL};
  result r = tool_run("sbx-learn", opts, gcc);
  ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
  ck_assert_int_eq(unlink(bin), 0);

  g_auto(GStrv) rules = learned_rules(name);
  g_autofree char *tmpdir = realpath(g_get_tmp_dir(), NULL);
  g_autofree char *tmp_rule =
      g_strdup_printf("create,stat-intermediate %s/", tmpdir);
  /* gcc leaves nothing in its temporary directory: the sandbox's own
   * /tmp serves the rerun where that is the directory, no rule names
   * it; elsewhere ($TMPDIR) the directory is granted. */
  if (is_private_dir(tmpdir))
    ck_assert_msg(!rule_names(rules, tmpdir), "a rule names %s", tmpdir);
  else
    ck_assert_msg(has_rule(rules, tmp_rule), "no %s", tmp_rule);
  for (char **rule = rules; *rule; rule++) {
    const char *path = strchr(*rule, ' ') + 1;
    ck_assert_msg(
        !g_str_has_prefix(path, tmpdir) || !sbx_learn_name_looks_random(path),
        "a random name kept: %s", *rule);
    ck_assert_msg(strcmp(path, "/") != 0, "rule %s", *rule);
  }

  result again = run_printed_line(r.err);
  ck_assert_msg(again.status == 0, "status %d", again.status);
  result_clear(&again);
  result_clear(&r);
  const char *hello[] = {bin, NULL};
  expect(run(hello), 0, "compiled\n", NULL);

  /* Control: the same compile under sbx-run without the profile. */
  ck_assert_int_eq(unlink(bin), 0);
  const char *x[] = {"--allow-exec", NULL};
  r = sbx_run(x, gcc);
  ck_assert_int_ne(r.status, 0);
  assert_contains(r.err, "sbx: denied");
  ck_assert_int_eq(access(bin, F_OK), -1);
  result_clear(&r);
}
END_TEST

/* Paths a program probed that did not exist stay missing: the rerun
 * gets ENOENT as the learning run did, not EACCES, for stat, access and
 * open, also below a directory that does not exist. The same probes
 * without the learned rules are refused (the control); a file next to
 * a probed one stays refused. */
START_TEST(paths_probed_missing_are_missing_again_not_refused) {
  g_autofree char *dir = make_dir("probed");
  g_autofree char *m1 = path_in("probed/missing.conf");
  g_autofree char *m2 = path_in("probed/no-dir/sub/missing");
  g_autofree char *m3 = path_in("probed/missing-opened");
  g_autofree char *beside = make_file("probed/present", "here");
  g_autofree char *script = g_strdup_printf(
      "import os\n"
      "def err(f):\n"
      "  try:\n"
      "    f(); return 0\n"
      "  except OSError as e:\n"
      "    return e.errno\n"
      "print(err(lambda: os.stat('%s')), os.access('%s', os.R_OK),\n"
      "      err(lambda: open('%s').close()))\n",
      m1, m2, m3);
  const char *py[] = {"/usr/bin/python3", "-c", script, NULL};
  g_autofree char *name = path_in("probing");
  g_autofree char *out = learn(name, py);
  ck_assert_str_eq(out, "2 False 2\n");
  result r = run_learned(name, py);
  ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
  ck_assert_str_eq(r.out, "2 False 2\n");
  assert_lacks(r.err, m1);
  assert_lacks(r.err, m2);
  assert_lacks(r.err, m3);
  result_clear(&r);

  /* Control: the learned profile's other rules, without the probes'. */
  g_autofree char *other = g_strdup_printf(
      "import os\n"
      "try:\n"
      "  os.stat('%s')\n"
      "except OSError as e:\n"
      "  print(e.errno)\n",
      beside);
  const char *py_other[] = {"/usr/bin/python3", "-c", other, NULL};
  r = run(py_other);
  ck_assert_str_eq(r.out, "");
  result_clear(&r);
  /* The program succeeds, so sbx-run shows its refusals only when asked. */
  g_autofree char *profile = g_strconcat(name, ".profile", NULL);
  const char *explain[] = {"--explain", "--profile", profile, NULL};
  r = sbx_run(explain, py_other);
  ck_assert_str_eq(r.out, "2\n");
  g_autofree char *line = g_strdup_printf("sbx: denied stat %s", beside);
  assert_contains(r.err, line);
  result_clear(&r);
  const char *read_py[] = {"--explain", "--allow-read", "/usr", NULL};
  r = sbx_run(read_py, py);
  ck_assert_str_eq(r.out, "2 False 2\n");
  assert_contains(r.err, "sbx: denied");
  result_clear(&r);
}
END_TEST

START_TEST(made_up_names_look_random_ordinary_names_do_not) {
  const char *random[] = {"/tmp/cc2l8XMv.cdtor.c", "/tmp/tmpa1b2c3",
                          "/var/tmp/sh-thd.Xy7kQ2", "x/QtTmPfile.pid"};
  const char *ordinary[] = {"/usr/lib/python3.11", "/srv/report2026.txt",
                            "/tmp/hello.c",        "/tmp/libfoo.so.6",
                            "/tmp/README",         "/tmp/a1"};
  for (size_t i = 0; i < G_N_ELEMENTS(random); i++)
    ck_assert_msg(sbx_learn_name_looks_random(random[i]), "%s", random[i]);
  for (size_t i = 0; i < G_N_ELEMENTS(ordinary); i++)
    ck_assert_msg(!sbx_learn_name_looks_random(ordinary[i]), "%s", ordinary[i]);
  ck_assert(!sbx_learn_name_looks_random(NULL));
}
END_TEST

/* sbx-learn runs the command again under sbx-run with what it learned:
 * a rerun that ends differently (here a second run takes another path,
 * reading a file the first did not) fails the check, names the
 * refusal, and sbx-learn exits non-zero; --no-verify skips the check
 * (the control), and a run that the profile reproduces passes it. */
START_TEST(a_profile_that_does_not_reproduce_the_run_fails_the_check) {
  g_autofree char *marks = make_dir("marks");
  g_autofree char *mark = path_in("marks/second-run");
  g_autofree char *secret = make_file("not-learned", "x\n");
  g_autofree char *script =
      g_strdup_printf("if [ -e '%s' ]; then read x < '%s'; else : > '%s'; fi",
                      mark, secret, mark);
  const char *sh[] = {"/bin/sh", "-c", script, NULL};
  g_autofree char *name = path_in("diverging");
  const char *opts[] = {"-o", name, NULL};
  result r = tool_run("sbx-learn", opts, sh);
  ck_assert_int_ne(r.status, 0);
  assert_contains(r.err, "CHECK FAILED");
  assert_contains(r.err, "while learning it exited 0");
  g_autofree char *line = g_strdup_printf("  sbx: denied open %s", secret);
  assert_contains(r.err, line);
  g_autofree char *profile = g_strconcat(name, ".profile", NULL);
  ck_assert(g_file_test(profile, G_FILE_TEST_IS_REGULAR));
  result_clear(&r);

  ck_assert_int_eq(unlink(mark), 0);
  const char *skip[] = {"-o", name, "--no-verify", NULL};
  r = tool_run("sbx-learn", skip, sh);
  ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
  assert_contains(r.err, "not checked (--no-verify)");
  assert_lacks(r.err, "CHECK FAILED");
  result_clear(&r);

  g_autofree char *data = make_file("reproduced", "x");
  const char *cat[] = {"/bin/cat", data, NULL};
  g_autofree char *cname = path_in("reproduced-cat");
  const char *copts[] = {"-o", cname, NULL};
  expect(tool_run("sbx-learn", copts, cat), 0, "x",
         "checked: under sbx-run with the learned profile the program "
         "exited 0");
}
END_TEST

/* A learned policy's refusals are visible: ls learned listing a
 * directory, run with -la, is refused calls it never made while learning,
 * and each refusal prints an sbx: line naming the learned layer. The
 * controls: the same command outside the sandbox succeeds, and the
 * learned command prints no such line. */
START_TEST(refusals_of_a_learned_policy_print_a_line) {
  g_autofree char *dir = make_dir("long-listing");
  g_autofree char *f = make_file("long-listing/entry", "1");
  g_autofree char *name = path_in("ls-short");
  const char *ls[] = {"/bin/ls", dir, NULL};
  const char *ls_la[] = {"/bin/ls", "-la", dir, NULL};
  g_autofree char *out = learn(name, ls);
  expect(run(ls_la), 0, "entry", NULL);
  result r = run_learned(name, ls);
  ck_assert_int_eq(r.status, 0);
  assert_lacks(r.err, "not allowed by");
  result_clear(&r);
  r = run_learned(name, ls_la);
  ck_assert_int_ne(r.status, 0);
  assert_contains(r.err, "sbx: denied syscall ");
  g_autofree char *why = g_strdup_printf("(not allowed by %s.profile: ", name);
  assert_contains(r.err, why);
  result_clear(&r);
}
END_TEST

/* The same for a policy given with --policy: mkdir refused by it says so,
 * and mkdir without it succeeds (the control). */
START_TEST(refusals_of_a_stacked_policy_file_print_a_line) {
  g_autofree char *dir = make_dir("stacked-out");
  g_autofree char *sub = path_in("stacked-out/d");
  g_autofree char *pol =
      make_file("nomkdir.policy",
                "@denylist\nmkdir: return EPERM\nmkdirat: return "
                "EPERM\n");
  const char *mk[] = {"/bin/mkdir", sub, NULL};
  const char *refused[] = {"-w", dir, "--policy", pol, NULL};
  result r = sbx_run(refused, mk);
  ck_assert_int_eq(r.status, 1);
  g_autofree char *line =
      g_strdup_printf("sbx: denied syscall mkdir (not allowed by %s)", pol);
  assert_contains(r.err, line);
  assert_contains(r.err, "Operation not permitted");
  ck_assert_int_eq(access(sub, F_OK), -1);
  result_clear(&r);
  const char *allowed[] = {"-w", dir, NULL};
  expect(sbx_run(allowed, mk), 0, NULL, NULL);
  ck_assert_int_eq(access(sub, F_OK), 0);
}
END_TEST

static uint32_t run_prog(const sbx_bpf_program *p,
                         const struct seccomp_data *d) {
  return sbx_bpf_run(p->insns, p->len, d, NULL);
}

/* The two programs sbx-run makes of a stacked layer decide as stacked.h
 * says, on every system call number and a spread of arguments: the
 * installed layer allows what the layer refused (except the calls that
 * skip reporting, which it decides as compiled) and keeps everything
 * else; the baseline behind the layer notifies what the layer refused
 * and otherwise decides as the baseline alone. */
START_TEST(a_stacked_layer_and_the_baseline_behind_it_decide_as_documented) {
  GError *error = NULL;
  sbx_policy *pol = sbx_policy_parse_string(
      "@default return EACCES\nread: 1\nclose: 1\nexecve: 1\n"
      "openat: arg2 == 0\nsocket: arg0 == AF_UNIX\nmkdir: return EPERM\n"
      "ptrace: kill-process\n",
      "layer.policy", NULL, &error);
  ck_assert_msg(pol != NULL, "%s", error ? error->message : "");
  sbx_bpf_program layer = {0}, quiet = {0}, base = {0}, composed = {0};
  ck_assert(sbx_bpf_compile(pol, &layer, &error));
  sbx_policy_free(pol);
  ck_assert(sbx_run_stacked_reportable(&layer));
  sbx_run_stacked_without_errno(&layer, &quiet);
  ck_assert(sbx_bpf_check(quiet.insns, quiet.len, NULL));
  sbx_run_baseline(false, false, &base);
  const sbx_bpf_program *parts[] = {&layer};
  ck_assert_msg(sbx_run_stacked_compose(parts, 1, &base, &composed, &error),
                "%s", error ? error->message : "");
  const uint64_t values[] = {0,         1,     2, 0x80000, 0xffffffffull,
                             TIOCSCTTY, TCGETS};
  unsigned refused = 0, passed = 0;
  for (int nr = 0; nr < 460; nr++) {
    for (size_t v = 0; v < G_N_ELEMENTS(values); v++) {
      struct seccomp_data d = {.nr = nr, .arch = AUDIT_ARCH_X86_64};
      for (int a = 0; a < 6; a++)
        d.args[a] = values[v];
      uint32_t l = run_prog(&layer, &d);
      bool errno_ = (l & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_ERRNO;
      bool skips = sbx_run_stacked_skips(&d);
      uint32_t q = run_prog(&quiet, &d);
      uint32_t c = run_prog(&composed, &d);
      if (skips || !errno_)
        ck_assert_msg(q == l, "nr %d: %x, not %x", nr, q, l);
      else
        ck_assert_msg(q == SECCOMP_RET_ALLOW, "nr %d: %x", nr, q);
      if (errno_ && !skips) {
        ck_assert_msg(c == SECCOMP_RET_USER_NOTIF, "nr %d: %x", nr, c);
        refused++;
      } else {
        ck_assert_msg(c == run_prog(&base, &d), "nr %d: %x", nr, c);
        passed++;
      }
    }
  }
  ck_assert_uint_gt(refused, 100);
  ck_assert_uint_gt(passed, 10);
  sbx_bpf_program_clear(&composed);
  /* Beyond the limit: refused, nothing made. */
  sbx_bpf_program big = {.insns = g_new0(struct sock_filter, BPF_MAXINSNS),
                         .len = BPF_MAXINSNS};
  const sbx_bpf_program *too_many[] = {&big};
  ck_assert(!sbx_run_stacked_compose(too_many, 1, &base, &composed, &error));
  ck_assert(error != NULL);
  g_clear_error(&error);
  ck_assert(!sbx_run_stacked_reportable(NULL));
  sbx_bpf_program_clear(&big);
  sbx_bpf_program_clear(&layer);
  sbx_bpf_program_clear(&quiet);
  sbx_bpf_program_clear(&base);
}
END_TEST

/* A loopback TCP listener that answers each connection's byte with 'y'
 * (the probe's exchange), on a thread for the rest of the test. */
static int listen_loopback(uint16_t *port) {
  int p;
  int fd = tcp_listen_loopback(16, &p);
  *port = (uint16_t)p;
  return fd;
}

static void *echo_loop(void *arg) {
  int *fds = arg;
  for (;;) {
    struct pollfd p[2] = {{.fd = fds[0], .events = POLLIN},
                          {.fd = fds[1], .events = POLLIN}};
    if (poll(p, 2, -1) < 0)
      continue;
    for (int i = 0; i < 2; i++) {
      if (!(p[i].revents & POLLIN))
        continue;
      int c = accept4(fds[i], NULL, NULL, SOCK_CLOEXEC);
      if (c < 0)
        continue;
      char b;
      if (read(c, &b, 1) == 1)
        (void)!write(c, "y", 1);
      close(c);
    }
  }
  return NULL;
}

/* A program learned connecting to one TCP port may connect to it again
 * and to no other: the profile lists the ports used ([network]
 * connect-ports) and sbx-run's supervisor refuses the rest with a line.
 * The control: the other port is reachable under sbx-run --net without
 * the profile. */
START_TEST(a_learned_network_profile_keeps_only_the_ports_used) {
  static int fds[2];
  uint16_t learned, other;
  fds[0] = listen_loopback(&learned);
  fds[1] = listen_loopback(&other);
  pthread_t t;
  ck_assert_int_eq(pthread_create(&t, NULL, echo_loop, fds), 0);
  pthread_detach(t);
  g_autofree char *probe = probe_path();
  g_autofree char *p1 = g_strdup_printf("%u", (unsigned)learned);
  g_autofree char *p2 = g_strdup_printf("%u", (unsigned)other);
  const char *to_learned[] = {probe, "connect-tcp", p1, NULL};
  const char *to_other[] = {probe, "connect-tcp", p2, NULL};
  g_autofree char *name = path_in("tcp");
  g_autofree char *out = learn(name, to_learned);
  assert_contains(out, "exchange=ok");

  g_autofree char *profile = g_strconcat(name, ".profile", NULL);
  g_autofree char *text = file_text(profile);
  g_autofree char *ports = g_strdup_printf("connect-ports=%s;\n", p1);
  assert_contains(text, ports);
  assert_contains(text, "bind-ports=\n");
  g_autofree char *seen = g_strdup_printf("127.0.0.1 port %s", p1);
  assert_contains(text, seen);

  expect(run_learned(name, to_learned), 0, "exchange=ok", NULL);
  result r = run_learned(name, to_other);
  ck_assert_int_eq(r.status, 1);
  g_autofree char *line = g_strdup_printf(
      "sbx: denied connect 127.0.0.1 port %s (port not in the profile's "
      "[network] connect-ports)",
      p2);
  assert_contains(r.err, line);
  result_clear(&r);
  const char *net[] = {"--net", NULL};
  expect(sbx_run(net, to_other), 0, "exchange=ok", NULL);
}
END_TEST

/* A [network] port that is not one is refused with the file, group and
 * key; a valid list loads (the control). */
START_TEST(a_profile_with_a_bad_port_is_refused) {
  g_autofree char *bad = make_file(
      "bad-port.profile",
      "[profile]\nseccomp=sbx-run.policy\n[network]\nconnect-ports=443;"
      "70000\n");
  g_autofree char *good = make_file(
      "good-port.profile",
      "[profile]\nseccomp=sbx-run.policy\n[network]\nconnect-ports=443;"
      "53\nbind-ports=\n");
  const char *t[] = {"/bin/true", NULL};
  const char *o1[] = {"--profile", bad, NULL};
  result r = sbx_run(o1, t);
  ck_assert_int_eq(r.status, 125);
  assert_contains(r.err, "[network] connect-ports");
  assert_contains(r.err, "\"70000\" is not a port");
  result_clear(&r);
  const char *o2[] = {"--profile", good, NULL};
  expect(sbx_run(o2, t), 0, NULL, NULL);
}
END_TEST

/* ---- what the files say -----------------------------------------------------
 */

START_TEST(a_program_that_made_no_socket_is_refused_one_by_its_learned_policy) {
  g_autofree char *data = make_file("probe-input", "x");
  g_autofree char *probe = probe_path();
  g_autofree char *name = path_in("probe");
  const char *rd[] = {probe, "read", data, NULL};
  const char *sock[] = {probe, "socket-inet", NULL};
  g_autofree char *out = learn(name, rd);
  assert_contains(out, "data=x");

  sbx_policy *pol = learned_policy(name);
  ck_assert_uint_eq(eval(pol, __NR_read, 0, 0, 0), SECCOMP_RET_ALLOW);
  ck_assert_uint_ne(eval(pol, __NR_socket, AF_INET, 1, 0), SECCOMP_RET_ALLOW);
  sbx_policy_free(pol);

  /* Positive control: with the network kept, sbx-run alone lets the
   * probe make the socket; the learned layer on top refuses it. */
  const char *net[] = {"--net", NULL};
  result r = sbx_run(net, sock);
  ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
  result_clear(&r);
  g_autofree char *profile = g_strconcat(name, ".profile", NULL);
  const char *learned_net[] = {"--net", "--profile", profile, NULL};
  expect(sbx_run(learned_net, sock), 1, "errno=1\n", NULL);
  /* ... while what was learned still runs under the same options. */
  expect(sbx_run(learned_net, rd), 0, "data=x", NULL);
}
END_TEST

START_TEST(every_learned_rule_says_how_many_calls_it_saw) {
  g_autofree char *dir = make_dir("counted");
  g_autofree char *name = path_in("counted-ls");
  const char *ls[] = {"/bin/ls", dir, NULL};
  g_autofree char *out = learn(name, ls);
  g_autofree char *path = g_strconcat(name, ".policy", NULL);
  g_autofree char *text = file_text(path);
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  int rules = 0;
  bool startup_block = false;
  for (char **l = lines; *l; l++) {
    if (g_str_has_prefix(*l, "# Not observed"))
      startup_block = true;
    if (!**l || **l == '#' || **l == '@')
      continue;
    rules++;
    if (!startup_block) {
      ck_assert_msg(l > lines && strstr(l[-1], " observed") != NULL,
                    "no count above '%s'", *l);
    }
  }
  ck_assert_int_gt(rules, 10);
  /* What the loader and exit need is there even if not all was seen. */
  sbx_policy *pol = learned_policy(name);
  ck_assert_uint_eq(eval(pol, __NR_exit_group, 0, 0, 0), SECCOMP_RET_ALLOW);
  ck_assert_uint_eq(eval(pol, __NR_execve, 0, 0, 0), SECCOMP_RET_ALLOW);
  ck_assert_uint_eq(eval(pol, __NR_mmap, 0, 4096, 1), SECCOMP_RET_ALLOW);
  sbx_policy_free(pol);
}
END_TEST

START_TEST(open_flags_seen_become_the_only_flags_allowed) {
  g_autofree char *data = make_file("flags-input", "x");
  g_autofree char *name = path_in("flags-cat");
  const char *cat[] = {"/bin/cat", data, NULL};
  g_autofree char *out = learn(name, cat);
  g_autofree char *path = g_strconcat(name, ".policy", NULL);
  g_autofree char *text = file_text(path);
  assert_contains(text, "openat: arg2 in ");
  sbx_policy *pol = learned_policy(name);
  /* cat only ever opened for reading. */
  ck_assert_uint_eq(eval(pol, __NR_openat, AT_FDCWD, 0, O_RDONLY | O_CLOEXEC),
                    SECCOMP_RET_ALLOW);
  ck_assert_uint_ne(eval(pol, __NR_openat, AT_FDCWD, 0, O_WRONLY | O_CREAT),
                    SECCOMP_RET_ALLOW);
  sbx_policy_free(pol);
}
END_TEST

START_TEST(
    many_files_read_in_one_directory_fold_into_it_a_single_one_does_not) {
  g_autofree char *lib = make_dir("lib");
  g_autofree char *a = make_file("lib/a", "a");
  g_autofree char *b = make_file("lib/b", "b");
  g_autofree char *c = make_file("lib/c", "c");
  g_autofree char *later = make_file("lib/later", "later\n");
  g_autofree char *one = make_dir("one");
  g_autofree char *only = make_file("one/only", "only");
  g_autofree char *sibling = make_file("one/sibling", "sibling\n");
  g_autofree char *many = path_in("many");
  g_autofree char *single = path_in("single");
  const char *cat3[] = {"/bin/cat", a, b, c, NULL};
  const char *cat1[] = {"/bin/cat", only, NULL};
  g_autofree char *o1 = learn(many, cat3);
  g_autofree char *o2 = learn(single, cat1);
  g_auto(GStrv) folded = learned_rules(many);
  g_auto(GStrv) exact = learned_rules(single);
  g_autofree char *dir_rule =
      g_strdup_printf("read,stat-intermediate %s/", lib);
  g_autofree char *file_rule =
      g_strdup_printf("read,stat-intermediate %s", only);
  ck_assert_msg(has_rule(folded, dir_rule), "no %s", dir_rule);
  ck_assert_msg(has_rule(exact, file_rule), "no %s", file_rule);

  /* So a file of the folded directory not read while learning is
   * readable, and the single file's sibling is not. */
  const char *cat_later[] = {"/bin/cat", later, NULL};
  result r = run_learned(many, cat_later);
  ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
  ck_assert_str_eq(r.out, "later\n");
  result_clear(&r);
  const char *cat_sibling[] = {"/bin/cat", sibling, NULL};
  g_autofree char *err = denied_read(single, cat_sibling, sibling, 1);
}
END_TEST

START_TEST(a_file_written_grants_its_directory_and_children_are_followed) {
  g_autofree char *out_dir = make_dir("out");
  g_autofree char *target = path_in("out/made-by-child");
  g_autofree char *name = path_in("sh");
  g_autofree char *probe = probe_path();
  g_autofree char *script = g_strdup_printf("'%s' write '%s'", probe, target);
  /* dash forks and execs the probe: the write happens in a child. */
  const char *sh[] = {"/bin/sh", "-c", script, NULL};
  const char *opts[] = {"-o", name, "--no-verify", NULL};
  result r = tool_run("sbx-learn", opts, sh);
  ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
  assert_contains(r.err, "executed other programs");
  result_clear(&r);
  ck_assert_int_eq(access(target, F_OK), 0);
  ck_assert_int_eq(unlink(target), 0);
  g_auto(GStrv) rules = learned_rules(name);
  g_autofree char *rule =
      g_strdup_printf("create,stat-intermediate %s/", out_dir);
  ck_assert_msg(has_rule(rules, rule), "no %s", rule);

  /* The probe itself, learned directly, writes again under sbx-run into
   * that directory, and not next to it. */
  g_autofree char *direct = path_in("writer");
  const char *wr[] = {probe, "write", target, NULL};
  g_autofree char *o = learn_once(direct, wr);
  ck_assert_int_eq(unlink(target), 0);
  r = run_learned(direct, wr);
  ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
  ck_assert_int_eq(access(target, F_OK), 0);
  result_clear(&r);
  g_autofree char *beside = path_in("beside");
  const char *wr2[] = {probe, "write", beside, NULL};
  r = run_learned(direct, wr2);
  ck_assert_int_eq(r.status, 1);
  ck_assert_int_eq(access(beside, F_OK), -1);
  assert_contains(r.err, "sbx: denied open ");
  result_clear(&r);
}
END_TEST

/* ^C at the terminal reaches the program's process group: the program
 * dies of it, and sbx-learn still writes what the run did. */
START_TEST(an_interrupted_program_still_leaves_its_learned_files) {
  g_autofree char *bin = tool_path("sbx-learn");
  g_autofree char *probe = probe_path();
  g_autofree char *name = path_in("interrupted");
  int p[2];
  ck_assert_int_eq(pipe(p), 0);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    setpgid(0, 0);
    int null = open("/dev/null", O_WRONLY);
    dup2(null, 2);
    dup2(p[1], 1);
    close(p[0]);
    execl(bin, bin, "-o", name, "--", probe, "wait", (char *)NULL);
    _exit(98);
  }
  close(p[1]);
  char buf[16] = {0};
  ck_assert_int_gt(read(p[0], buf, sizeof(buf) - 1), 0);
  ck_assert_str_eq(buf, "ready\n");
  ck_assert_int_eq(kill(-pid, SIGINT), 0);
  int st;
  ck_assert_int_eq(waitpid(pid, &st, 0), pid);
  close(p[0]);
  ck_assert(WIFEXITED(st));
  ck_assert_int_eq(WEXITSTATUS(st), 128 + SIGINT);
  sbx_policy *pol = learned_policy(name);
  ck_assert_uint_eq(eval(pol, __NR_write, 1, 0, 6), SECCOMP_RET_ALLOW);
  sbx_policy_free(pol);
}
END_TEST

START_TEST(sbx_learn_refuses_a_missing_program_a_built_in_name_and_allow) {
  g_autofree char *name = path_in("missing");
  g_autofree char *missing = path_in("no-such-program");
  const char *m[] = {missing, NULL};
  const char *opts[] = {"-o", name, NULL};
  result r = tool_run("sbx-learn", opts, m);
  ck_assert_int_eq(r.status, 127);
  g_autofree char *policy = g_strconcat(name, ".policy", NULL);
  ck_assert(!g_file_test(policy, G_FILE_TEST_EXISTS));
  result_clear(&r);
  g_autofree char *builtin = path_in("renderer");
  const char *t[] = {"/bin/true", NULL};
  const char *o2[] = {"-o", builtin, NULL};
  expect(tool_run("sbx-learn", o2, t), 125, NULL, "built-in");
  const char *o4[] = {"-o", builtin, "--default", "allow", NULL};
  expect(tool_run("sbx-learn", o4, t), 125, NULL, "would allow every call");
  /* Positive control: another name works. */
  g_autofree char *fine = path_in("true");
  const char *o3[] = {"-o", fine, NULL};
  expect(tool_run("sbx-learn", o3, t), 0, NULL, NULL);
  /* A name given with the suffix names the same pair, once suffixed. */
  g_autofree char *suffixed = path_in("suffixed.profile");
  g_autofree char *policy_of = path_in("suffixed.policy");
  g_autofree char *doubled = path_in("suffixed.profile.profile");
  g_autofree char *run_it =
      g_strdup_printf("sbx-run --profile %s --", suffixed);
  const char *o5[] = {"-o", suffixed, NULL};
  expect(tool_run("sbx-learn", o5, t), 0, NULL, run_it);
  ck_assert(g_file_test(suffixed, G_FILE_TEST_IS_REGULAR));
  ck_assert(g_file_test(policy_of, G_FILE_TEST_IS_REGULAR));
  ck_assert(!g_file_test(doubled, G_FILE_TEST_EXISTS));
  g_autofree char *builtin_suffixed = path_in("renderer.profile");
  const char *o6[] = {"-o", builtin_suffixed, NULL};
  expect(tool_run("sbx-learn", o6, t), 125, NULL, "built-in");
}
END_TEST

static Suite *sbx_learn_suite(void) {
  Suite *s = suite_create("sbx-learn");
  TCase *runs = tcase_create("learn-then-run");
  tcase_add_checked_fixture(runs, tool_setup, tool_teardown);
  tcase_set_timeout(runs, 120);
  tcase_add_test(runs, ls_learned_on_a_directory_lists_it_again_under_sbx_run);
  tcase_add_test(runs,
                 cat_learned_on_one_file_is_denied_etc_shadow_and_a_canary);
  tcase_add_test(runs,
                 python_learned_reading_a_file_reads_it_again_and_nothing_else);
  tcase_add_test(
      runs, a_program_that_made_no_socket_is_refused_one_by_its_learned_policy);
  tcase_add_test(runs, a_program_that_made_a_network_socket_keeps_the_network);
  tcase_add_test(runs, a_threaded_program_learned_starts_its_threads_again);
  tcase_add_test(runs, entries_only_looked_at_fold_into_a_stat_rule);
  tcase_add_test(runs,
                 a_program_that_talks_to_itself_over_loopback_needs_no_network);
  tcase_add_test(runs,
                 a_unix_socket_used_while_learning_is_granted_by_its_path);
  tcase_add_test(runs,
                 the_printed_command_line_carries_the_options_the_run_needed);
  tcase_add_test(runs, a_program_that_traced_is_run_with_allow_ptrace);
  tcase_add_test(runs, gcc_learned_compiling_a_file_compiles_it_again);
  tcase_add_test(runs,
                 a_run_that_left_nothing_in_tmp_keeps_the_sandboxs_own_tmp);
  tcase_add_test(runs, paths_probed_missing_are_missing_again_not_refused);
  tcase_add_test(runs,
                 a_profile_that_does_not_reproduce_the_run_fails_the_check);
  tcase_add_test(runs, refusals_of_a_learned_policy_print_a_line);
  tcase_add_test(runs, refusals_of_a_stacked_policy_file_print_a_line);
  tcase_add_test(runs, a_learned_network_profile_keeps_only_the_ports_used);
  tcase_add_test(runs, a_profile_with_a_bad_port_is_refused);
  suite_add_tcase(s, runs);

  TCase *files = tcase_create("output");
  tcase_add_checked_fixture(files, tool_setup, tool_teardown);
  tcase_set_timeout(files, 120);
  tcase_add_test(files, every_learned_rule_says_how_many_calls_it_saw);
  tcase_add_test(files, made_up_names_look_random_ordinary_names_do_not);
  tcase_add_test(
      files, a_stacked_layer_and_the_baseline_behind_it_decide_as_documented);
  tcase_add_test(files, open_flags_seen_become_the_only_flags_allowed);
  tcase_add_test(
      files,
      many_files_read_in_one_directory_fold_into_it_a_single_one_does_not);
  tcase_add_test(files,
                 a_file_written_grants_its_directory_and_children_are_followed);
  tcase_add_test(files, an_interrupted_program_still_leaves_its_learned_files);
  tcase_add_test(files,
                 sbx_learn_refuses_a_missing_program_a_built_in_name_and_allow);
  suite_add_tcase(s, files);
  return s;
}

int main(void) {
  /* tool_run.h: every sbx-run call gets --explain. */
  g_setenv("SBX_RUN_MODE", "explain", TRUE);
  SRunner *sr = srunner_create(sbx_learn_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
