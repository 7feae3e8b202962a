/* The public host API end to end: sbx_sandbox_start with the built-in
 * renderer profile and an extra "create" rule for a temporary home, real
 * workers forked by a real zygote, file access through a real broker, and
 * how each worker ended as sbx_sandbox_wait reports it. Every test starts
 * its own sandbox inside Check's forked child. */
#include <check.h>
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <glib/gstdio.h>

#include "sandbox/kernel/seccomp/bpf.h"
#include "sandbox/tests/api/api_test_util.h"
#include "sandbox/tests/api/pool_util.h"
#include "sbx/sbx.h"

/* An obsolete call no policy names: the renderer's default kills for it;
 * unsandboxed the kernel answers ENOSYS. */
#define UNKNOWN_SYSCALL __NR_tuxcall

/* The host's; a worker gets its copy in the spawn's payload (the zygote
 * is a fresh exec of this program: it does not share the host's memory). */
static api_dirs dirs;

static int entry_probe(const sbx_worker_args *args) {
  api_probe p;
  if (args->payload_len != sizeof(api_dirs))
    return 91;
  api_probe_run(args->payload, &p);
  if (write(3, &p, sizeof p) != (ssize_t)sizeof p)
    return 90;
  return 42;
}

/* Sends the status the zygote collected, then the errno of opening the
 * allowed file (0 if it opened). */
static int entry_status_and_open(const sbx_worker_args *args) {
  sbx_sandbox_status none = SBX_SANDBOX_STATUS_INIT();
  const sbx_sandbox_status *st = args->status ? args->status : &none;
  FILE *f = fopen(API_ALLOWED_FILE, "r");
  int err = f ? 0 : errno;
  if (f)
    fclose(f);
  if (write(3, st, sizeof *st) != (ssize_t)sizeof *st ||
      write(3, &err, sizeof err) != (ssize_t)sizeof err)
    return 90;
  return 0;
}

/* Exits with 100 + the errno of socket(AF_INET), or 0 if it worked. */
static int entry_inet_socket(const sbx_worker_args *args) {
  int sock = socket(AF_INET, SOCK_STREAM, 0);
  return sock < 0 ? 100 + errno : 0;
}

static int entry_unknown_syscall(const sbx_worker_args *args) {
  syscall(UNKNOWN_SYSCALL, 0x1234, 0x5678, 0x9abc, 0, 0, 0);
  return 0;
}

/* Blocks until fd 3 reaches EOF. */
static int entry_wait_for_eof(const sbx_worker_args *args) {
  char c;
  while (read(3, &c, 1) > 0) {
  }
  return 7;
}

/* Writes one byte on fd 3 (a socket), then blocks until it reaches EOF. */
static int entry_ready_then_wait_for_eof(const sbx_worker_args *args) {
  char c = 1;
  if (write(3, &c, 1) != 1)
    return 90;
  return entry_wait_for_eof(args);
}

/* Workers forked ahead for the renderer type: 0, or the "pooled" test
 * case's pool, which reruns the sandboxing checks on pooled workers. */
static unsigned pool;

/* The renderer type with the home rule, and a config naming it. */
static sbx_sandbox_config renderer_config(sbx_process_type *t,
                                          sbx_worker_entry entry) {
  static char rule[192];
  static const char *rules[2];
  api_home_rules(&dirs, rule, sizeof rule, rules);
  sbx_process_type type =
      SBX_PROCESS_TYPE_INIT(.name = "renderer", .entry = entry,
                            .extra_rules = rules, .pool = pool);
  *t = type;
  sbx_sandbox_config config =
      SBX_SANDBOX_CONFIG_INIT(.types = t, .n_types = 1,
                              .audit_log = dirs.audit_log);
  return config;
}

static sbx_sandbox *start_renderer(sbx_worker_entry entry) {
  sbx_process_type t;
  sbx_sandbox_config config = renderer_config(&t, entry);
  sbx_sandbox *s = NULL;
  GError *error = NULL;
  if (!sbx_sandbox_start(&config, &s, &error))
    ck_abort_msg("sbx_sandbox_start: %s", error->message);
  /* The pooled case: its workers come from a full pool. */
  if (pool)
    g_array_unref(api_await_zygote_children(s, pool));
  return s;
}

static pid_t spawn_with_fd(sbx_sandbox *s, int fd) {
  int fds[] = {0, 1, 2, fd};
  sbx_spawn_config spawn =
      SBX_SPAWN_CONFIG_INIT(.process_type = "renderer", .fds = fds, .n_fds = 4,
                            .payload = &dirs, .payload_len = sizeof dirs);
  pid_t pid = -1;
  GError *error = NULL;
  if (!sbx_sandbox_spawn(s, &spawn, &pid, &error))
    ck_abort_msg("sbx_sandbox_spawn: %s", error->message);
  ck_assert_int_gt(pid, 0);
  return pid;
}

static void wait_for(sbx_sandbox *s, pid_t pid, sbx_worker_exit *exit) {
  GError *error = NULL;
  if (!sbx_sandbox_wait(s, pid, 20000, exit, &error))
    ck_abort_msg("sbx_sandbox_wait: %s", error->message);
  ck_assert_int_eq(exit->pid, pid);
}

/* The host has no child left: nothing half-started survives a failure. */
static void assert_no_children(void) {
  ck_assert_int_eq(waitpid(-1, NULL, WNOHANG), -1);
  ck_assert_int_eq(errno, ECHILD);
}

static void setup(void) {
  api_dirs_make(&dirs);
}

static void teardown(void) {
  api_dirs_remove(&dirs);
}

static void setup_pooled(void) {
  pool = 2;
  api_dirs_make(&dirs);
}

static void teardown_pooled(void) {
  api_dirs_remove(&dirs);
  pool = 0;
}

START_TEST(worker_opens_allowed_files_and_writes_its_home_through_the_broker) {
  api_assert_unsandboxed_controls(&dirs);
  sbx_sandbox *s = start_renderer(entry_probe);
  int out[2];
  ck_assert_int_eq(pipe(out), 0);
  pid_t pid = spawn_with_fd(s, out[1]);
  close(out[1]);
  api_probe p;
  api_read_all(out[0], &p, sizeof p);
  close(out[0]);
  sbx_worker_exit exit = SBX_WORKER_EXIT_INIT();
  wait_for(s, pid, &exit);
  ck_assert_msg(exit.reason == SBX_EXIT_NORMAL, "%s", exit.detail);
  ck_assert_int_eq(exit.exit_code, 42);
  api_assert_probe_sandboxed(&dirs, &p);
  sbx_sandbox_stop(s);
  api_assert_canary_denial_audited(&dirs, "renderer");
}
END_TEST

START_TEST(worker_gets_eperm_for_an_inet_socket) {
  int sock = socket(AF_INET, SOCK_STREAM, 0);
  ck_assert_int_ge(sock, 0); /* control: allowed outside the sandbox */
  close(sock);
  sbx_sandbox *s = start_renderer(entry_inet_socket);
  pid_t pid = spawn_with_fd(s, 2);
  sbx_worker_exit exit = SBX_WORKER_EXIT_INIT();
  wait_for(s, pid, &exit);
  ck_assert_msg(exit.reason == SBX_EXIT_NORMAL, "%s", exit.detail);
  ck_assert_int_eq(exit.exit_code, 100 + EPERM);
  sbx_sandbox_stop(s);
}
END_TEST

START_TEST(policy_kill_is_reported_with_syscall_and_arguments) {
  errno = 0;
  ck_assert_int_eq(syscall(UNKNOWN_SYSCALL, 0x1234, 0x5678, 0x9abc, 0, 0, 0),
                   -1);
  ck_assert_int_eq(errno, ENOSYS); /* control: harmless unsandboxed */
  sbx_sandbox *s = start_renderer(entry_unknown_syscall);
  pid_t pid = spawn_with_fd(s, 2);
  sbx_worker_exit exit = SBX_WORKER_EXIT_INIT();
  wait_for(s, pid, &exit);
  ck_assert_msg(exit.reason == SBX_EXIT_POLICY_KILL, "%s", exit.detail);
  ck_assert_int_eq(exit.signal, SIGSYS);
  ck_assert_int_eq(exit.syscall_nr, UNKNOWN_SYSCALL);
  ck_assert_uint_eq(exit.syscall_args[0], 0x1234);
  ck_assert_uint_eq(exit.syscall_args[1], 0x5678);
  ck_assert_uint_eq(exit.syscall_args[2], 0x9abc);
  ck_assert_msg(strstr(exit.detail,
                       "policy kill: tuxcall(184) args 0x1234, "
                       "0x5678, 0x9abc"),
                "%s", exit.detail);
  sbx_sandbox_stop(s);
}
END_TEST

START_TEST(stop_leaves_no_worker_zygote_or_broker) {
  sbx_sandbox *s = start_renderer(entry_wait_for_eof);
  int hold[2];
  ck_assert_int_eq(pipe(hold), 0);
  pid_t workers[3];
  for (int i = 0; i < 3; i++)
    workers[i] = spawn_with_fd(s, hold[0]);
  pid_t zygote = sbx_sandbox_zygote_pid(s);
  pid_t broker = sbx_sandbox_broker_pid(s);
  ck_assert_int_gt(zygote, 0);
  ck_assert_int_gt(broker, 0);
  ck_assert_int_ne(zygote, broker);
  for (int i = 0; i < 3; i++)
    ck_assert_int_eq(kill(workers[i], 0), 0); /* control: alive now */
  sbx_sandbox_stop(s);
  for (int i = 0; i < 3; i++) {
    ck_assert_int_eq(kill(workers[i], 0), -1);
    ck_assert_int_eq(errno, ESRCH);
  }
  ck_assert_int_eq(kill(zygote, 0), -1);
  ck_assert_int_eq(kill(broker, 0), -1);
  assert_no_children();
  close(hold[0]);
  close(hold[1]);
}
END_TEST

START_TEST(wait_times_out_while_the_worker_runs_then_reports_its_exit) {
  sbx_sandbox *s = start_renderer(entry_wait_for_eof);
  int hold[2];
  ck_assert_int_eq(pipe(hold), 0);
  pid_t pid = spawn_with_fd(s, hold[0]);
  close(hold[0]);
  sbx_worker_exit exit = SBX_WORKER_EXIT_INIT();
  GError *error = NULL;
  ck_assert(!sbx_sandbox_wait(s, pid, 100, &exit, &error));
  api_assert_error(error, SBX_ERROR, SBX_ERROR_TIMED_OUT);
  g_clear_error(&error);
  ck_assert(!sbx_sandbox_wait(s, -1, 0, &exit, &error));
  api_assert_error(error, SBX_ERROR, SBX_ERROR_TIMED_OUT);
  g_clear_error(&error);
  close(hold[1]); /* the worker's read sees EOF */
  struct pollfd pfd = {.fd = sbx_sandbox_event_fd(s), .events = POLLIN};
  ck_assert_int_eq(poll(&pfd, 1, 20000), 1);
  wait_for(s, pid, &exit);
  ck_assert_msg(exit.reason == SBX_EXIT_NORMAL, "%s", exit.detail);
  ck_assert_int_eq(exit.exit_code, 7);
  sbx_sandbox_stop(s);
}
END_TEST

/* Runs one entry_status_and_open worker of type and reads its report. */
static int status_and_open(sbx_sandbox *s, const char *type,
                           sbx_sandbox_status *st) {
  int out[2];
  ck_assert_int_eq(pipe(out), 0);
  int fds[] = {0, 1, 2, out[1]};
  sbx_spawn_config spawn =
      SBX_SPAWN_CONFIG_INIT(.process_type = type, .fds = fds, .n_fds = 4);
  pid_t pid = -1;
  GError *error = NULL;
  if (!sbx_sandbox_spawn(s, &spawn, &pid, &error))
    ck_abort_msg("sbx_sandbox_spawn: %s", error->message);
  close(out[1]);
  int err;
  api_read_all(out[0], st, sizeof *st);
  api_read_all(out[0], &err, sizeof err);
  close(out[0]);
  sbx_worker_exit exit = SBX_WORKER_EXIT_INIT();
  wait_for(s, pid, &exit);
  ck_assert_msg(exit.reason == SBX_EXIT_NORMAL && exit.exit_code == 0, "%s",
                exit.detail);
  return err;
}

START_TEST(each_type_gets_its_profile_layers_and_allowlist) {
  sbx_process_type types[] = {
      SBX_PROCESS_TYPE_INIT(.name = "renderer", .entry = entry_status_and_open),
      SBX_PROCESS_TYPE_INIT(.name = "decoder", .profile = "utility",
                            .entry = entry_status_and_open),
  };
  sbx_sandbox_config config =
      SBX_SANDBOX_CONFIG_INIT(.types = types, .n_types = 2,
                              .audit_log = dirs.audit_log);
  sbx_sandbox *s = NULL;
  GError *error = NULL;
  if (!sbx_sandbox_start(&config, &s, &error))
    ck_abort_msg("sbx_sandbox_start: %s", error->message);

  sbx_sandbox_status st = SBX_SANDBOX_STATUS_INIT();
  /* The renderer's rules name the file: its channel gets it. */
  ck_assert_int_eq(status_and_open(s, "renderer", &st), 0);
  ck_assert_uint_eq(st.size, sizeof st); /* this library's */
  ck_assert_str_eq(st.process_type, "renderer");
  ck_assert_msg(st.fully_sandboxed, "renderer status not complete");
  ck_assert_int_eq(st.broker, SBX_LAYER_ON);
  ck_assert_int_eq(st.landlock, SBX_LAYER_ON);
  ck_assert_uint_eq(st.n_seccomp_layers, 2);
  ck_assert_str_eq(st.seccomp_layers[0], "broker-client");
  ck_assert_str_eq(st.seccomp_layers[1], "renderer.policy");
  /* The utility profile has no rules: the same open is refused on the
   * decoder's channel, whatever the worker claims to be. */
  ck_assert_int_eq(status_and_open(s, "decoder", &st), EACCES);

  pid_t pid;
  sbx_spawn_config unknown = SBX_SPAWN_CONFIG_INIT(.process_type = "printer");
  ck_assert(!sbx_sandbox_spawn(s, &unknown, &pid, &error));
  api_assert_error(error, SBX_ERROR, SBX_ERROR_INVALID);
  ck_assert_msg(strstr(error->message, "printer"), "%s", error->message);
  g_error_free(error);
  sbx_sandbox_stop(s);
  g_autofree char *log = NULL;
  ck_assert(g_file_get_contents(dirs.audit_log, &log, NULL, NULL));
  ck_assert_msg(strstr(log, "type=decoder") && !strstr(log, "type=renderer"),
                "%s", log);
}
END_TEST

/* The filters a renderer worker runs under, read back from the kernel
 * (PTRACE_SECCOMP_GET_FILTER, newest first). The kernel skips them all
 * for a call each of them allows on a path that loads only arch and nr
 * (docs/bpf.md, "The kernel's action cache"): getpid must be such a call
 * in every one; fcntl, whose argument the renderer checks, is the control
 * that the emulation sees argument loads. Reading filters needs
 * CAP_SYS_ADMIN; without it the test says so and ends. */
START_TEST(every_filter_of_a_worker_leaves_getpid_to_the_kernel_cache) {
  sbx_sandbox *s = start_renderer(entry_ready_then_wait_for_eof);
  int p[2];
  ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p), 0);
  pid_t pid = spawn_with_fd(s, p[0]);
  close(p[0]);
  char ready;
  ck_assert_int_eq(read(p[1], &ready, 1), 1);
  int filters = 0, checked = 0;
  bool fcntl_checked = false;
  if (ptrace(PTRACE_SEIZE, pid, 0, 0) == 0) {
    ck_assert_int_eq(ptrace(PTRACE_INTERRUPT, pid, 0, 0), 0);
    int status;
    ck_assert_int_eq(waitpid(pid, &status, __WALL), pid);
    for (;; filters++) {
      long n = ptrace(PTRACE_SECCOMP_GET_FILTER, pid, filters, NULL);
      if (n < 0)
        break;
      struct sock_filter *insns = g_new(struct sock_filter, n);
      ck_assert_int_eq(ptrace(PTRACE_SECCOMP_GET_FILTER, pid, filters, insns),
                       n);
      uint32_t action = 0;
      ck_assert_msg(sbx_bpf_const_action(insns, (size_t)n, AUDIT_ARCH_X86_64,
                                         __NR_getpid, &action) &&
                        action == SECCOMP_RET_ALLOW,
                    "filter %d (%ld instructions): getpid runs it", filters, n);
      if (!sbx_bpf_const_action(insns, (size_t)n, AUDIT_ARCH_X86_64, __NR_fcntl,
                                &action))
        fcntl_checked = true;
      checked++;
      g_free(insns);
    }
    ck_assert_int_eq(errno, filters ? ENOENT : EACCES);
    ptrace(PTRACE_DETACH, pid, 0, 0);
  }
  int seize_errno = errno;
  close(p[1]);
  sbx_worker_exit e = SBX_WORKER_EXIT_INIT();
  wait_for(s, pid, &e);
  sbx_sandbox_stop(s);
  ck_assert_int_eq(e.exit_code, 7);
  if (filters == 0) {
    printf(
        "sbx-skip: every_filter_of_a_worker_leaves_getpid_to_the_kernel_"
        "cache: cannot read a worker's filters here (%s)\n",
        g_strerror(seize_errno));
    fflush(stdout);
    return;
  }
  /* Layer 1 and the renderer's policy. */
  ck_assert_int_ge(checked, 2);
  ck_assert(fcntl_checked);
}
END_TEST

static GError *start_failure(const char *profile) {
  sbx_process_type types[] = {
      SBX_PROCESS_TYPE_INIT(.name = "renderer", .entry = entry_probe),
      SBX_PROCESS_TYPE_INIT(.name = "custom", .profile = profile,
                            .entry = entry_probe),
  };
  sbx_sandbox_config config =
      SBX_SANDBOX_CONFIG_INIT(.types = types, .n_types = 2,
                              .profile_dir = dirs.outside);
  sbx_sandbox *s = NULL;
  GError *error = NULL;
  ck_assert(!sbx_sandbox_start(&config, &s, &error));
  ck_assert_ptr_null(s);
  ck_assert_ptr_nonnull(error);
  assert_no_children();
  return error;
}

START_TEST(bad_profile_fails_the_start_and_names_the_file) {
  api_write_file(dirs.outside, "good.profile",
                 "[profile]\nseccomp=renderer.policy\n");
  api_write_file(
      dirs.outside, "bad.profile",
      "[profile]\nseccomp=renderer.policy\n[namespces]\nenter=user\n");
  /* Control: the same directory and type with a valid profile start. */
  sbx_process_type t =
      SBX_PROCESS_TYPE_INIT(.name = "custom", .profile = "good.profile",
                            .entry = entry_probe);
  sbx_sandbox_config config =
      SBX_SANDBOX_CONFIG_INIT(.types = &t, .n_types = 1,
                              .profile_dir = dirs.outside);
  sbx_sandbox *s = NULL;
  GError *error = NULL;
  if (!sbx_sandbox_start(&config, &s, &error))
    ck_abort_msg("control: %s", error->message);
  sbx_sandbox_stop(s);

  error = start_failure("bad.profile");
  api_assert_error(error, SBX_ERROR, SBX_ERROR_INVALID);
  ck_assert_msg(strstr(error->message, "bad.profile") &&
                    strstr(error->message, "namespces"),
                "%s", error->message);
  g_error_free(error);
}
END_TEST

START_TEST(bad_policy_fails_the_start_and_names_file_and_line) {
  api_write_file(dirs.outside, "bad.policy",
                 "# a policy with a typo\nread: 1\nwrite: arg0 === 1\n");
  api_write_file(dirs.outside, "uses-bad.profile",
                 "[profile]\nseccomp=renderer.policy;bad.policy\n");
  GError *error = start_failure("uses-bad.profile");
  api_assert_error(error, SBX_ERROR, SBX_ERROR_INVALID);
  ck_assert_msg(strstr(error->message, "bad.policy:3"), "%s", error->message);
  g_error_free(error);
}
END_TEST

static void write_proc(const char *path, const char *text) {
  g_autoptr(GError) error = NULL;
  ck_assert_msg(g_file_set_contents_full(
                    path, text, -1, G_FILE_SET_CONTENTS_NONE, 0644, &error),
                "%s: %s", path, error ? error->message : "");
}

START_TEST(zygote_failure_after_the_broker_started_stops_the_broker) {
  /* A user namespace of this test's own, where it may lower the number of
   * user namespaces that can be created below it: the broker (a plain
   * fork) still starts, the zygote (which needs a new user namespace) then
   * cannot. Mapped to uid 1000 inside, so the zygote does not switch to
   * nobody, which is not mapped here. */
  uid_t uid = geteuid();
  gid_t gid = getegid();
  ck_assert_int_eq(unshare(CLONE_NEWUSER), 0);
  g_autofree char *uid_map = g_strdup_printf("1000 %u 1\n", (unsigned)uid);
  g_autofree char *gid_map = g_strdup_printf("1000 %u 1\n", (unsigned)gid);
  write_proc("/proc/self/setgroups", "deny");
  write_proc("/proc/self/uid_map", uid_map);
  write_proc("/proc/self/gid_map", gid_map);
  /* setgroups is denied here: without CAP_SETUID/CAP_SETGID in effect the
   * zygote takes the unprivileged path, as it would on the host. */
  struct __user_cap_header_struct hdr = {.version =
                                             _LINUX_CAPABILITY_VERSION_3};
  struct __user_cap_data_struct caps[2];
  ck_assert_int_eq(syscall(SYS_capget, &hdr, caps), 0);
  caps[0].effective &= ~((1u << CAP_SETUID) | (1u << CAP_SETGID));
  ck_assert_int_eq(syscall(SYS_capset, &hdr, caps), 0);

  /* A profile that requires user namespaces; the built-in renderer
   * would run without them (degrade_api_test). */
  g_autofree char *profile =
      g_build_filename(dirs.outside, "strict.profile", NULL);
  write_proc(profile,
             "[profile]\n"
             "seccomp=renderer.policy\n"
             "require=seccomp;broker;userns;landlock\n"
             "[broker]\n"
             "rules=read /usr/share/common-licenses/\n");
  sbx_process_type t;
  sbx_sandbox_config config = renderer_config(&t, entry_probe);
  t.profile = profile;
  sbx_sandbox *s = NULL;
  GError *error = NULL;

  /* Control: in this namespace the sandbox starts. */
  ck_assert(sbx_sandbox_start(&config, &s, &error));
  sbx_sandbox_stop(s);
  s = NULL;

  write_proc("/proc/sys/user/max_user_namespaces", "0");
  ck_assert(!sbx_sandbox_start(&config, &s, &error));
  ck_assert_ptr_null(s);
  api_assert_error(error, SBX_ERROR, SBX_ERROR_UNSUPPORTED);
  ck_assert_msg(strstr(error->message, "requires user namespaces") &&
                    strstr(error->message, "user.max_user_namespaces is 0"),
                "%s", error->message);
  g_error_free(error);
  assert_no_children(); /* the broker was started, and stopped again */
}
END_TEST

static void *parked(void *arg) {
  char c;
  while (read(*(int *)arg, &c, 1) > 0) {
  }
  return NULL;
}

START_TEST(threaded_host_is_refused) {
  int hold[2];
  ck_assert_int_eq(pipe(hold), 0);
  pthread_t thread;
  ck_assert_int_eq(pthread_create(&thread, NULL, parked, &hold[0]), 0);
  sbx_process_type t;
  sbx_sandbox_config config = renderer_config(&t, entry_probe);
  sbx_sandbox *s = NULL;
  GError *error = NULL;
  ck_assert(!sbx_sandbox_start(&config, &s, &error));
  api_assert_error(error, SBX_ERROR, SBX_ERROR_INVALID);
  ck_assert_msg(strstr(error->message, "2 threads"), "%s", error->message);
  g_error_free(error);
  assert_no_children();
  close(hold[1]);
  pthread_join(thread, NULL);
  close(hold[0]);
  /* Control: single-threaded again, the same configuration starts. */
  ck_assert(sbx_sandbox_start(&config, &s, NULL));
  sbx_sandbox_stop(s);
}
END_TEST

/* Ends through libc's exit(), which flushes every stdio buffer the worker
 * has: its copy of the host's, as the zygote got it. */
static int entry_exit_through_libc(const sbx_worker_args *args) {
  exit(5);
}

#define BUFFERED_LINE "a line the host buffered before starting the sandbox"

/* The host's side of the test below, in a process of its own whose
 * stdout is the pipe out: 0 when every step worked. */
static int buffered_line_host(int out) {
  if (dup2(out, STDOUT_FILENO) < 0)
    return 10;
  printf("%s", BUFFERED_LINE); /* no newline, no flush: it stays buffered */
  sbx_process_type t;
  sbx_sandbox_config config = renderer_config(&t, entry_exit_through_libc);
  sbx_sandbox *s = NULL;
  if (!sbx_sandbox_start(&config, &s, NULL))
    return 11;
  int fds[] = {0, 1, 2};
  sbx_spawn_config spawn =
      SBX_SPAWN_CONFIG_INIT(.process_type = "renderer", .fds = fds, .n_fds = 3);
  for (int i = 0; i < 2; i++) {
    pid_t pid = -1;
    sbx_worker_exit e = SBX_WORKER_EXIT_INIT();
    if (!sbx_sandbox_spawn(s, &spawn, &pid, NULL) ||
        !sbx_sandbox_wait(s, pid, 20000, &e, NULL))
      return 12;
    if (e.reason != SBX_EXIT_NORMAL || e.exit_code != 5)
      return 13;
  }
  sbx_sandbox_stop(s);
  return 0;
}

START_TEST(a_line_the_host_buffered_before_start_is_written_once) {
  int out[2];
  ck_assert_int_eq(pipe(out), 0);
  fflush(NULL);
  pid_t host = fork();
  ck_assert_int_ge(host, 0);
  if (host == 0) {
    close(out[0]);
    exit(buffered_line_host(out[1])); /* exit() writes the host's buffer */
  }
  close(out[1]);
  g_autoptr(GString) got = g_string_new(NULL);
  char buf[4096];
  ssize_t n;
  while ((n = read(out[0], buf, sizeof buf)) > 0)
    g_string_append_len(got, buf, n);
  close(out[0]);
  int status;
  ck_assert_int_eq(waitpid(host, &status, 0), host);
  ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                "host step failed: status 0x%x", status);
  int count = 0;
  for (const char *p = got->str; (p = strstr(p, BUFFERED_LINE)); p++)
    count++;
  ck_assert_msg(count == 1, "the line was written %d times: \"%s\"", count,
                got->str);
}
END_TEST

static Suite *sandbox_suite(void) {
  Suite *s = suite_create("api_sandbox");
  TCase *tc = tcase_create("host");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 30);
  tcase_add_test(
      tc, worker_opens_allowed_files_and_writes_its_home_through_the_broker);
  tcase_add_test(tc, worker_gets_eperm_for_an_inet_socket);
  tcase_add_test(tc, policy_kill_is_reported_with_syscall_and_arguments);
  tcase_add_test(tc, each_type_gets_its_profile_layers_and_allowlist);
  tcase_add_test(tc,
                 every_filter_of_a_worker_leaves_getpid_to_the_kernel_cache);
  tcase_add_test(tc, stop_leaves_no_worker_zygote_or_broker);
  tcase_add_test(tc,
                 wait_times_out_while_the_worker_runs_then_reports_its_exit);
  tcase_add_test(tc, bad_profile_fails_the_start_and_names_the_file);
  tcase_add_test(tc, bad_policy_fails_the_start_and_names_file_and_line);
  tcase_add_test(tc, threaded_host_is_refused);
  tcase_add_test(tc, a_line_the_host_buffered_before_start_is_written_once);
  tcase_add_test(tc, zygote_failure_after_the_broker_started_stops_the_broker);
  suite_add_tcase(s, tc);
  TCase *pooled = tcase_create("pooled");
  tcase_add_checked_fixture(pooled, setup_pooled, teardown_pooled);
  tcase_set_timeout(pooled, 30);
  tcase_add_test(
      pooled,
      worker_opens_allowed_files_and_writes_its_home_through_the_broker);
  tcase_add_test(pooled, worker_gets_eperm_for_an_inet_socket);
  tcase_add_test(pooled, policy_kill_is_reported_with_syscall_and_arguments);
  tcase_add_test(pooled, stop_leaves_no_worker_zygote_or_broker);
  tcase_add_test(pooled,
                 wait_times_out_while_the_worker_runs_then_reports_its_exit);
  suite_add_tcase(s, pooled);
  return s;
}

int main(int argc, char **argv) {
  sbx_main_hook(argc, argv);
  return api_run_suite(sandbox_suite());
}
