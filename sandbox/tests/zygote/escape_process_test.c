/* Escape attempts on other processes and on the worker's own state, inside
 * real workers under the built-in renderer profile: S5 (tracing and
 * reaching into other processes, the pid namespace), S16 (threads made
 * after the layers), S17 (the SIGSYS path), S29 (descriptors), S33
 * (privileges), S34 (/proc/PID/exe), S35 (the policy is read once,
 * before the sandbox) and the S21 rows the broker answers. Where a broker
 * matters the attack also runs in a "brokered" worker (layer 1 and a real
 * broker, as in production). Each has a positive control: the same
 * operation in an unsandboxed process, where it works.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/kcmp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib.h>
#include <glib/gstdio.h>

#include "sandbox/broker/broker.h"
#include "sandbox/policy/builtin/builtin.h"
#include "sandbox/tests/zygote/escape_util.h"

#ifndef SYS_SECCOMP
#define SYS_SECCOMP 1
#endif

/* A number no kernel assigns yet: every built-in policy traps it. */
#define UNASSIGNED_NR 471

enum {
  A_PTRACE_ATTACH = 1,
  A_PTRACE_SEIZE,
  A_PTRACE_TRACEME,
  A_VM_READV,
  A_VM_WRITEV,
  A_KCMP,
  A_KILL_PROBE, /* kill(target, 0) */
  A_HOLD_CANARY,
  A_THREAD_SOCKET,
  A_THREAD_UNASSIGNED,
  A_THREAD_OPEN,
  A_FORGED_KILL,
  A_FORGED_QUEUE,
  A_FORGED_SECCOMP_CODE,
  A_TRAP_WITH_SIGSYS_BLOCKED,
  A_OPEN_WITH_SIGSYS_BLOCKED,
  A_TRAP_WITH_SIGSYS_IGNORED,
  A_TRAP,
  A_FD_INVENTORY,
  A_PRIVILEGES,
  A_OPEN,
  A_GETPPID,
  A_STATX,
  A_FACCESSAT2,
};

typedef struct {
  int id;
  long target;   /* a pid; 0 means the caller itself */
  long arg;      /* A_FD_INVENTORY: highest fd to look at */
  char path[64]; /* A_OPEN */
  int flags;     /* A_OPEN */
} request;

/* Every process of this test has it at the same address: workers and
 * helpers are forks of the test binary. */
static char canary[64] = "sbx canary: untouched";
static const char kPwned[] = "sbx canary: overwritten";

/* ---- The attacks (run in workers and in controls: no Check calls) ----- */

static void *socket_thread(void *arg) {
  escape_result *r = arg;
  errno = 0;
  r->ret = socket(AF_INET, SOCK_STREAM, 0);
  r->err = r->ret < 0 ? errno : 0;
  return NULL;
}

static void *unassigned_thread(void *arg) {
  escape_result *r = arg;
  errno = 0;
  r->ret = syscall(UNASSIGNED_NR);
  r->err = r->ret < 0 ? errno : 0;
  return NULL;
}

/* A file the renderer profile lets the broker open. */
static const char kAllowedFile[] = "/etc/ld.so.cache";

static void *open_thread(void *arg) {
  escape_result *r = arg;
  errno = 0;
  r->ret = open(kAllowedFile, O_RDONLY | O_CLOEXEC);
  r->err = r->ret < 0 ? errno : 0;
  return NULL;
}

static escape_result in_thread(void *(*fn)(void *)) {
  escape_result r = {-1, 0};
  pthread_t t;
  int rc = pthread_create(&t, NULL, fn, &r);
  if (rc != 0) {
    r.ret = -2;
    r.err = rc;
    return r;
  }
  pthread_join(t, NULL);
  return r;
}

static long forge_sigsys(int code) {
  siginfo_t info;
  memset(&info, 0, sizeof info);
  info.si_signo = SIGSYS;
  info.si_code = code;
  info.si_pid = getpid();
  info.si_uid = getuid();
  if (code == SYS_SECCOMP) {
    info.si_syscall = __NR_getpid;
    info.si_arch = 0xc000003e; /* AUDIT_ARCH_X86_64 */
    info.si_call_addr = NULL;
  }
  return syscall(__NR_rt_sigqueueinfo, getpid(), SIGSYS, &info);
}

/* Whether a SIGSYS is still pending: a forged one must have been delivered
 * (and ignored by the handler), not left waiting. */
static bool sigsys_pending(void) {
  sigset_t set;
  sigemptyset(&set);
  return sigpending(&set) == 0 && sigismember(&set, SIGSYS);
}

typedef struct {
  int count; /* open descriptors found */
  int fds[32];
  int types[32]; /* S_IFMT of each */
  int highest_checked;
} fd_inventory;

/* Every number from 0 to the larger of RLIMIT_NOFILE and bound. */
static void take_inventory(long bound, fd_inventory *inv) {
  memset(inv, 0, sizeof *inv);
  struct rlimit rl;
  long limit = getrlimit(RLIMIT_NOFILE, &rl) == 0 ? (long)rl.rlim_cur : 0;
  if (bound > limit)
    limit = bound;
  for (long fd = 0; fd < limit; fd++) {
    if (fcntl((int)fd, F_GETFD) < 0)
      continue;
    /* fstat(2) itself: glibc's fstat() is newfstatat(fd, "", AT_EMPTY_PATH),
     * a path call that traps to the broker. */
    struct stat st;
    int type = syscall(__NR_fstat, (int)fd, &st) == 0
                   ? (int)(st.st_mode & S_IFMT)
                   : -1;
    if (inv->count < 32) {
      inv->fds[inv->count] = (int)fd;
      inv->types[inv->count] = type;
    }
    inv->count++;
  }
  inv->highest_checked = (int)limit - 1;
}

typedef struct {
  long no_new_privs;
  int capget_rc;
  uint32_t effective[2], permitted[2], inheritable[2];
  int bounding_held;   /* caps PR_CAPBSET_READ says are in the set */
  int bounding_failed; /* reads refused */
  int bounding_checked;
  int ambient_held;
  int ambient_failed;
  uid_t uid[3];
  gid_t gid[3];
  int n_groups;
} privileges;

static void read_privileges(privileges *p) {
  memset(p, 0, sizeof *p);
  p->no_new_privs = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0);
  struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3,
                                         .pid = 0};
  struct __user_cap_data_struct data[2];
  memset(data, 0, sizeof data);
  p->capget_rc = (int)syscall(__NR_capget, &hdr, data);
  for (int i = 0; i < 2; i++) {
    p->effective[i] = data[i].effective;
    p->permitted[i] = data[i].permitted;
    p->inheritable[i] = data[i].inheritable;
  }
  /* Up to the first number the kernel says is not a capability. */
  for (int cap = 0; cap < 64; cap++) {
    int in = prctl(PR_CAPBSET_READ, cap, 0, 0, 0);
    if (in < 0 && errno == EINVAL)
      break;
    p->bounding_checked++;
    if (in < 0)
      p->bounding_failed++;
    else if (in > 0)
      p->bounding_held++;
    int amb = prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, cap, 0, 0);
    if (amb < 0)
      p->ambient_failed++;
    else if (amb > 0)
      p->ambient_held++;
  }
  getresuid(&p->uid[0], &p->uid[1], &p->uid[2]);
  getresgid(&p->gid[0], &p->gid[1], &p->gid[2]);
  p->n_groups = getgroups(0, NULL);
}

static escape_result attack(const request *req) {
  pid_t target = req->target ? (pid_t)req->target : getpid();
  char buf[sizeof canary];
  struct iovec local = {.iov_base = buf, .iov_len = sizeof buf};
  struct iovec remote = {.iov_base = canary, .iov_len = sizeof canary};
  escape_result r = {-1, 0};
  errno = 0;
  switch (req->id) {
    case A_PTRACE_ATTACH:
      r.ret = ptrace(PTRACE_ATTACH, target, 0, 0);
      break;
    case A_PTRACE_SEIZE:
      r.ret = ptrace(PTRACE_SEIZE, target, 0, 0);
      break;
    case A_PTRACE_TRACEME:
      r.ret = ptrace(PTRACE_TRACEME, 0, 0, 0);
      break;
    case A_VM_READV:
      r.ret = process_vm_readv(target, &local, 1, &remote, 1, 0);
      break;
    case A_VM_WRITEV:
      memcpy(buf, kPwned, sizeof kPwned);
      r.ret = process_vm_writev(target, &local, 1, &remote, 1, 0);
      break;
    case A_KCMP:
      r.ret = syscall(__NR_kcmp, getpid(), target, KCMP_VM, 0, 0);
      break;
    case A_KILL_PROBE:
      r.ret = kill(target, 0);
      break;
    case A_THREAD_SOCKET:
      return in_thread(socket_thread);
    case A_THREAD_UNASSIGNED:
      return in_thread(unassigned_thread);
    case A_THREAD_OPEN:
      return in_thread(open_thread);
    case A_FORGED_KILL:
      r.ret = kill(getpid(), SIGSYS);
      break;
    case A_FORGED_QUEUE:
      r.ret = forge_sigsys(SI_QUEUE);
      break;
    case A_FORGED_SECCOMP_CODE:
      r.ret = forge_sigsys(SYS_SECCOMP);
      break;
    case A_TRAP_WITH_SIGSYS_BLOCKED:
    case A_OPEN_WITH_SIGSYS_BLOCKED: {
      sigset_t set;
      sigemptyset(&set);
      sigaddset(&set, SIGSYS);
      sigprocmask(SIG_BLOCK, &set, NULL);
      r.ret = req->id == A_OPEN_WITH_SIGSYS_BLOCKED
                  ? open(req->path, O_RDONLY | O_CLOEXEC)
                  : syscall(UNASSIGNED_NR);
      break;
    }
    case A_TRAP_WITH_SIGSYS_IGNORED:
      signal(SIGSYS, SIG_IGN);
      r.ret = syscall(UNASSIGNED_NR);
      break;
    case A_TRAP:
      r.ret = syscall(UNASSIGNED_NR);
      break;
    case A_OPEN:
      r.ret = open(req->path, req->flags | O_CLOEXEC);
      break;
    case A_STATX: {
      char stx[512]; /* room for any struct statx */
      r.ret = syscall(__NR_statx, AT_FDCWD, req->path, 0, 0x7ff, stx);
      break;
    }
    case A_FACCESSAT2:
      r.ret = syscall(__NR_faccessat2, AT_FDCWD, req->path, R_OK, 0);
      break;
    case A_GETPPID:
      r.ret = syscall(__NR_getppid);
      break;
    default:
      r.ret = -2;
  }
  r.err = r.ret < 0 ? errno : 0;
  if (r.ret >= 0 &&
      (req->id == A_FORGED_KILL || req->id == A_FORGED_QUEUE ||
       req->id == A_FORGED_SECCOMP_CODE) &&
      sigsys_pending())
    r.ret = -3;
  return r;
}

static void probe_attack(int reply_fd, const void *arg) {
  escape_result r = attack(arg);
  escape_reply_to(reply_fd, &r, sizeof r);
}

static void probe_inventory(int reply_fd, const void *arg) {
  fd_inventory inv;
  take_inventory(((const request *)arg)->arg, &inv);
  escape_reply_to(reply_fd, &inv, sizeof inv);
}

static void probe_privileges(int reply_fd, const void *arg) {
  privileges p;
  read_privileges(&p);
  escape_reply_to(reply_fd, &p, sizeof p);
}

/* ---- The worker --------------------------------------------------------- */

static int entry(const sbx_zygote_worker *args) {
  request req;
  memset(&req, 0, sizeof req);
  memcpy(&req, args->payload,
         args->payload_len < sizeof req ? args->payload_len : sizeof req);
  char c;
  switch (req.id) {
    case A_HOLD_CANARY: {
      /* Says who it is, waits for the attacks to end, shows its canary. */
      pid_t self = getpid();
      escape_reply(&self, sizeof self);
      if (read(4, &c, 1) != 1)
        return 3;
      escape_reply(canary, sizeof canary);
      return 0;
    }
    case A_FD_INVENTORY: {
      fd_inventory inv;
      take_inventory(req.arg, &inv);
      int given[2] = {args->report_fd, args->broker_fd};
      escape_reply(&inv, sizeof inv);
      escape_reply(given, sizeof given);
      return 0;
    }
    case A_PRIVILEGES: {
      privileges p;
      read_privileges(&p);
      escape_reply(&p, sizeof p);
      /* Stays alive while the host reads its uid and gid maps. */
      if (read(4, &c, 1) != 1)
        return 3;
      return 0;
    }
    default: {
      escape_result r = attack(&req);
      escape_reply(&r, sizeof r);
      return 0;
    }
  }
}

static void setup(void) {
  escape_start(entry);
}

static void teardown(void) {
  escape_stop();
}

static escape_call run_in(const char *type, const request *req) {
  return escape_run_call(type, req, sizeof *req);
}

static escape_call attack_in(const char *type, int id, long target) {
  request req = {.id = id, .target = target};
  return run_in(type, &req);
}

static void expect_errno(const char *what, int id, long target, int err) {
  escape_call s = attack_in("sandboxed", id, target);
  ck_assert_msg(s.o.wrote, "%s: worker ended: %s", what, s.o.exit.detail);
  ck_assert_msg(s.r.ret == -1 && s.r.err == err,
                "%s: got %ld errno %ld, want errno %d", what, s.r.ret, s.r.err,
                err);
}

/* A process that holds the canary and waits to be killed. */
static pid_t start_helper(void) {
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    for (;;)
      pause();
  }
  return pid;
}

static void stop_helper(pid_t pid) {
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
}

/* The canary as the test process (the helper's parent) reads it. */
static void read_canary_of(pid_t pid, char *out) {
  struct iovec local = {.iov_base = out, .iov_len = sizeof canary};
  struct iovec remote = {.iov_base = canary, .iov_len = sizeof canary};
  ck_assert_int_eq(process_vm_readv(pid, &local, 1, &remote, 1, 0),
                   (ssize_t)sizeof canary);
}

static pid_t nspid_of(pid_t host_pid) {
  char path[64];
  g_snprintf(path, sizeof path, "/proc/%d/status", (int)host_pid);
  g_autofree char *text = NULL;
  ck_assert(g_file_get_contents(path, &text, NULL, NULL));
  const char *line = strstr(text, "\nNSpid:");
  ck_assert_ptr_nonnull(line);
  const char *end = strchr(line + 1, '\n');
  const char *last = g_strrstr_len(line, end - line, "\t");
  return (pid_t)atoi(last + 1);
}

/* ---- S5 ------------------------------------------------------------------ */

static const int kReachAttacks[] = {A_PTRACE_ATTACH, A_PTRACE_SEIZE, A_VM_READV,
                                    A_VM_WRITEV, A_KCMP};

START_TEST(worker_cannot_trace_or_reach_into_any_process) {
  /* A real broker and a plain process standing in for one (a fork of this
   * test, so it holds the canary), which this test can always read. */
  GError *error = NULL;
  sbx_allowlist *allow = sbx_allowlist_new("renderer");
  const sbx_allowlist *const lists[] = {allow};
  sbx_broker_config bconfig = {
      .allowlists = lists, .n_allowlists = 1, .audit_fd = -1};
  sbx_broker *broker = sbx_broker_start(&bconfig, &error);
  if (!broker)
    ck_abort_msg("%s", error->message);
  pid_t broker_stand_in = start_helper();
  int release[2];
  ck_assert_int_eq(pipe2(release, O_CLOEXEC), 0);
  int sibling_reply;
  request hold = {.id = A_HOLD_CANARY};
  pid_t sibling = escape_spawn("sandboxed", &hold, sizeof hold, &release[0], 1,
                               &sibling_reply);
  close(release[0]);
  pid_t sibling_nspid = 0;
  ck_assert(
      escape_read_reply(sibling_reply, &sibling_nspid, sizeof sibling_nspid));
  ck_assert_int_eq(sibling_nspid, nspid_of(sibling));

  const struct {
    const char *name;
    long pid;
  } targets[] = {
      {"zygote", 1},
      {"itself", 0},
      {"sibling", sibling_nspid},
      {"host", getpid()},
      {"broker", sbx_broker_pid(broker)},
      {"broker stand-in", broker_stand_in},
  };
  for (size_t t = 0; t < G_N_ELEMENTS(targets); t++) {
    for (size_t a = 0; a < G_N_ELEMENTS(kReachAttacks); a++) {
      g_autofree char *what =
          g_strdup_printf("attack %d on %s", kReachAttacks[a], targets[t].name);
      expect_errno(what, kReachAttacks[a], targets[t].pid, EPERM);
    }
  }
  expect_errno("PTRACE_TRACEME", A_PTRACE_TRACEME, 0, EPERM);

  /* Nothing changed in either process that holds a canary. */
  char seen[sizeof canary];
  read_canary_of(broker_stand_in, seen);
  ck_assert_str_eq(seen, canary);
  ck_assert_int_eq(write(release[1], "x", 1), 1);
  ck_assert(escape_read_reply(sibling_reply, seen, sizeof seen));
  ck_assert_str_eq(seen, canary);
  close(sibling_reply);
  close(release[1]);
  ck_assert_int_eq(escape_wait(sibling).reason, SBX_ZYGOTE_EXIT_NORMAL);
  stop_helper(broker_stand_in);
  /* The broker is undumpable: only root can look into it, and even root
   * finds nothing of this test at the canary's address there: the broker
   * is a program of its own, with a layout of its own (S37). It still
   * answers either way. */
  struct iovec local = {.iov_base = seen, .iov_len = sizeof canary};
  struct iovec remote = {.iov_base = canary, .iov_len = sizeof canary};
  memset(seen, 0, sizeof seen);
  errno = 0;
  ssize_t n =
      process_vm_readv(sbx_broker_pid(broker), &local, 1, &remote, 1, 0);
  if (geteuid() == 0) {
    ck_assert_msg(n == -1 ? errno == EFAULT : strcmp(seen, canary) != 0,
                  "the broker holds this test's canary at its address");
  } else {
    ck_assert_int_eq(n, -1);
    ck_assert_int_eq(errno, EPERM);
  }
  sbx_broker_stats stats;
  if (!sbx_broker_get_stats(broker, &stats, &error))
    ck_abort_msg("%s", error->message);
  ck_assert_uint_eq(stats.bad_messages, 0);
  int status = 0;
  ck_assert(sbx_broker_stop(broker, &status, NULL));
  sbx_allowlist_free(allow);
}
END_TEST

/* The positive control: an unsandboxed process does each of them to a
 * process of its own user, and the write really lands. */
START_TEST(unsandboxed_process_can_trace_and_reach_into_a_peer) {
  for (size_t a = 0; a < G_N_ELEMENTS(kReachAttacks); a++) {
    pid_t peer = start_helper();
    request req = {.id = kReachAttacks[a], .target = peer};
    escape_result r;
    ck_assert(escape_run_unsandboxed(false, probe_attack, &req, &r, sizeof r));
    ck_assert_msg(r.ret >= 0, "attack %d: errno %ld", req.id, r.err);
    if (req.id == A_VM_WRITEV) {
      char seen[sizeof canary];
      read_canary_of(peer, seen);
      ck_assert_str_eq(seen, kPwned);
    }
    stop_helper(peer);
  }
  request traceme = {.id = A_PTRACE_TRACEME};
  escape_result r;
  ck_assert(
      escape_run_unsandboxed(false, probe_attack, &traceme, &r, sizeof r));
  ck_assert_int_eq(r.ret, 0);
}
END_TEST

/* The host's pid means nothing inside: the policy refuses the signal
 * (EPERM), and without the policy the pid namespace hides the host (ESRCH). */
START_TEST(worker_cannot_see_the_host_pid) {
  expect_errno("kill(host)", A_KILL_PROBE, getpid(), EPERM);
  escape_call c = attack_in("control", A_KILL_PROBE, getpid());
  ck_assert_msg(c.o.wrote, "%s", c.o.exit.detail);
  ck_assert_int_eq(c.r.ret, -1);
  ck_assert_int_eq(c.r.err, ESRCH);
  request self = {.id = A_KILL_PROBE, .target = getpid()};
  escape_result r;
  ck_assert(escape_run_unsandboxed(false, probe_attack, &self, &r, sizeof r));
  ck_assert_int_eq(r.ret, 0);
}
END_TEST

/* ---- S21: the "trap (broker)" rows ----------------------------------------
 */

/* statx and faccessat2 reach the broker, which answers from the renderer
 * profile's allowlist; without layer 1 they are a policy kill
 * (escape_test.c), without any filter the kernel answers. */
START_TEST(brokered_worker_gets_the_brokers_answer_for_statx_and_faccessat2) {
  const int ids[] = {A_STATX, A_FACCESSAT2};
  for (size_t i = 0; i < G_N_ELEMENTS(ids); i++) {
    request allowed = {.id = ids[i]};
    g_strlcpy(allowed.path, kAllowedFile, sizeof allowed.path);
    escape_call a = run_in("brokered", &allowed);
    ck_assert_msg(a.o.wrote, "%s", a.o.exit.detail);
    ck_assert_msg(a.r.ret == 0, "call %d: %ld errno %ld", ids[i], a.r.ret,
                  a.r.err);
    request denied = {.id = ids[i], .path = "/etc/hostname"};
    escape_call d = run_in("brokered", &denied);
    ck_assert_msg(d.o.wrote, "%s", d.o.exit.detail);
    ck_assert_int_eq(d.r.ret, -1);
    ck_assert_int_eq(d.r.err, EACCES);
    /* Control: both exist and are readable outside. */
    escape_result r;
    ck_assert(
        escape_run_unsandboxed(false, probe_attack, &allowed, &r, sizeof r));
    ck_assert_int_eq(r.ret, 0);
    ck_assert(
        escape_run_unsandboxed(false, probe_attack, &denied, &r, sizeof r));
    ck_assert_int_eq(r.ret, 0);
  }
}
END_TEST

/* ---- S16 ----------------------------------------------------------------- */

/* ASan's thread start opens /proc/self/maps, which only the broker
 * serves, and these workers have none: not built with ASan. */
#if !defined(__SANITIZE_ADDRESS__)
START_TEST(thread_started_inside_the_worker_is_filtered_too) {
  escape_call s = attack_in("sandboxed", A_THREAD_SOCKET, 0);
  ck_assert_msg(s.o.wrote, "%s", s.o.exit.detail);
  ck_assert_int_eq(s.r.ret, -1);
  ck_assert_int_eq(s.r.err, EPERM);
  escape_call k = attack_in("sandboxed", A_THREAD_UNASSIGNED, 0);
  ck_assert(!k.o.wrote);
  ck_assert_int_eq(k.o.exit.reason, SBX_ZYGOTE_EXIT_POLICY_KILL);
  ck_assert_int_eq(k.o.exit.syscall_nr, UNASSIGNED_NR);
  /* Control: the same threads without the filter. */
  escape_call c = attack_in("control", A_THREAD_SOCKET, 0);
  ck_assert_msg(c.o.wrote, "%s", c.o.exit.detail);
  ck_assert_int_ge(c.r.ret, 0);
  c = attack_in("control", A_THREAD_UNASSIGNED, 0);
  ck_assert_msg(c.o.wrote, "%s", c.o.exit.detail);
  ck_assert_int_eq(c.r.err, ENOSYS);
  /* With layer 1 and the broker: the thread's open traps and is served,
   * its socket() is still refused. */
  escape_call b = attack_in("brokered", A_THREAD_OPEN, 0);
  ck_assert_msg(b.o.wrote, "%s", b.o.exit.detail);
  ck_assert_msg(b.r.ret >= 0, "errno %ld", b.r.err);
  b = attack_in("brokered", A_THREAD_SOCKET, 0);
  ck_assert_msg(b.o.wrote, "%s", b.o.exit.detail);
  ck_assert_int_eq(b.r.ret, -1);
  ck_assert_int_eq(b.r.err, EPERM);
}
END_TEST
#endif

/* ---- S17 ----------------------------------------------------------------- */

START_TEST(forged_sigsys_is_ignored_by_the_handler) {
  const int forged[] = {A_FORGED_KILL, A_FORGED_QUEUE, A_FORGED_SECCOMP_CODE};
  for (size_t i = 0; i < G_N_ELEMENTS(forged); i++) {
    escape_call s = attack_in("sandboxed", forged[i], 0);
    ck_assert_msg(s.o.wrote, "forgery %d: %s", forged[i], s.o.exit.detail);
    ck_assert_msg(s.r.ret == 0, "forgery %d: %ld errno %ld", forged[i], s.r.ret,
                  s.r.err);
    ck_assert_int_eq(s.o.exit.reason, SBX_ZYGOTE_EXIT_NORMAL);
  }
  /* Control: the same signals really arrive; a process with the default
   * disposition dies of them. */
  for (size_t i = 0; i < G_N_ELEMENTS(forged); i++) {
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
      request req = {.id = forged[i]};
      attack(&req);
      _exit(0);
    }
    int st;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS,
                  "forgery %d: wait status 0x%x", forged[i], st);
  }
}
END_TEST

START_TEST(blocking_or_ignoring_sigsys_turns_a_trap_into_death) {
  /* The handler's way: a report of the call, then death by SIGSYS. */
  escape_call t = attack_in("sandboxed", A_TRAP, 0);
  ck_assert(!t.o.wrote);
  ck_assert_int_eq(t.o.exit.reason, SBX_ZYGOTE_EXIT_POLICY_KILL);
  ck_assert_int_eq(t.o.exit.syscall_nr, UNASSIGNED_NR);
  /* Without the handler the kernel kills outright: nothing returns. */
  const int ways[] = {A_TRAP_WITH_SIGSYS_BLOCKED, A_TRAP_WITH_SIGSYS_IGNORED};
  for (size_t i = 0; i < G_N_ELEMENTS(ways); i++) {
    escape_call s = attack_in("sandboxed", ways[i], 0);
    ck_assert_msg(!s.o.wrote, "way %d returned %ld", ways[i], s.r.ret);
    ck_assert_int_eq(s.o.exit.reason, SBX_ZYGOTE_EXIT_SIGNALED);
    ck_assert_int_eq(s.o.exit.signal, SIGSYS);
    /* Control: blocking or ignoring SIGSYS alone kills nobody. */
    escape_call c = attack_in("control", ways[i], 0);
    ck_assert_msg(c.o.wrote, "%s", c.o.exit.detail);
    ck_assert_int_eq(c.r.err, ENOSYS);
  }
  /* A file call the broker would serve: with SIGSYS blocked, no answer
   * but death. */
  request open_req = {.id = A_OPEN};
  g_strlcpy(open_req.path, kAllowedFile, sizeof open_req.path);
  escape_call served = run_in("brokered", &open_req);
  ck_assert_msg(served.o.wrote, "%s", served.o.exit.detail);
  ck_assert_msg(served.r.ret >= 0, "errno %ld", served.r.err);
  open_req.id = A_OPEN_WITH_SIGSYS_BLOCKED;
  escape_call blocked = run_in("brokered", &open_req);
  ck_assert_msg(!blocked.o.wrote, "returned %ld", blocked.r.ret);
  ck_assert_int_eq(blocked.o.exit.reason, SBX_ZYGOTE_EXIT_SIGNALED);
  ck_assert_int_eq(blocked.o.exit.signal, SIGSYS);
}
END_TEST

/* ---- S29 ----------------------------------------------------------------- */

/* Its own fixture: the noise must exist before the zygote is forked. */
START_TEST(worker_holds_only_the_descriptors_it_was_given) {
  struct rlimit rl;
  ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
  int high = rl.rlim_cur > 1000 ? 900 : (int)rl.rlim_cur - 20;
  ck_assert_int_gt(high, 200);
  /* Noise in the host, inheritable and above the worker's limit. */
  int dir = open("/", O_RDONLY | O_DIRECTORY);
  ck_assert_int_eq(dup2(dir, high), high);
  int noise[2];
  ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, noise), 0);
  ck_assert_int_eq(dup2(noise[0], high + 1), high + 1);
  escape_start(entry);

  int given[2];
  ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, given),
                   0);
  request req = {.id = A_FD_INVENTORY, .arg = (long)rl.rlim_max};
  /* stdio (/dev/null), the reply pipe, the socket given; then the broker
   * channel (a socket) when there is one, and the report pipe. */
  const struct {
    const char *type;
    int n;
    int types[7];
  } kinds[] = {
      {"sandboxed", 6, {S_IFCHR, S_IFCHR, S_IFCHR, S_IFIFO, S_IFSOCK, S_IFIFO}},
      {"brokered",
       7,
       {S_IFCHR, S_IFCHR, S_IFCHR, S_IFIFO, S_IFSOCK, S_IFSOCK, S_IFIFO}},
  };
  for (size_t k = 0; k < G_N_ELEMENTS(kinds); k++) {
    int fd;
    pid_t pid =
        escape_spawn(kinds[k].type, &req, sizeof req, &given[1], 1, &fd);
    fd_inventory inv;
    int named[2] = {-1, -1}; /* report fd, broker fd */
    bool got = escape_read_reply(fd, &inv, sizeof inv) &&
               escape_read_reply(fd, named, sizeof named);
    close(fd);
    sbx_zygote_exit ex = escape_wait(pid);
    ck_assert_msg(got, "%s: %s", kinds[k].type, ex.detail);
    ck_assert_int_eq(ex.reason, SBX_ZYGOTE_EXIT_NORMAL);
    ck_assert_int_ge(inv.highest_checked, high + 1);
    ck_assert_int_eq(inv.count, kinds[k].n);
    ck_assert_int_eq(named[0], kinds[k].n - 1);
    ck_assert_int_eq(named[1], kinds[k].n == 7 ? 5 : -1);
    for (int i = 0; i < kinds[k].n; i++) {
      ck_assert_int_eq(inv.fds[i], i);
      ck_assert_msg(inv.types[i] == kinds[k].types[i], "%s: fd %d is 0%o",
                    kinds[k].type, i, inv.types[i]);
    }
  }

  /* Control: the same inventory in the host finds the noise. */
  fd_inventory host;
  ck_assert(
      escape_run_unsandboxed(false, probe_inventory, &req, &host, sizeof host));
  bool saw_dir = false, saw_socket = false;
  for (int i = 0; i < host.count && i < 32; i++) {
    saw_dir |= host.fds[i] == high && host.types[i] == S_IFDIR;
    saw_socket |= host.fds[i] == high + 1 && host.types[i] == S_IFSOCK;
  }
  ck_assert(saw_dir && saw_socket);
  escape_stop();
  close(given[0]);
  close(given[1]);
  close(noise[0]);
  close(noise[1]);
  close(high);
  close(high + 1);
  close(dir);
}
END_TEST

/* ---- S33 ----------------------------------------------------------------- */

static void read_map(pid_t pid, const char *which, unsigned out[3]) {
  char path[64];
  g_snprintf(path, sizeof path, "/proc/%d/%s", (int)pid, which);
  g_autofree char *text = NULL;
  ck_assert(g_file_get_contents(path, &text, NULL, NULL));
  ck_assert_int_eq(sscanf(text, "%u %u %u", &out[0], &out[1], &out[2]), 3);
  /* One line only. */
  ck_assert_ptr_null(strchr(strchr(text, '\n') + 1, '\n'));
}

START_TEST(worker_has_no_privilege_of_any_kind) {
  int release[2];
  ck_assert_int_eq(pipe2(release, O_CLOEXEC), 0);
  request req = {.id = A_PRIVILEGES};
  int fd;
  pid_t pid = escape_spawn("sandboxed", &req, sizeof req, &release[0], 1, &fd);
  close(release[0]);
  privileges p;
  ck_assert(escape_read_reply(fd, &p, sizeof p));
  /* The maps, while it is alive: itself, one id (docs/namespaces.md). */
  unsigned uid_map[3], gid_map[3];
  read_map(pid, "uid_map", uid_map);
  read_map(pid, "gid_map", gid_map);
  ck_assert_int_eq(write(release[1], "x", 1), 1);
  close(release[1]);
  close(fd);
  ck_assert_int_eq(escape_wait(pid).reason, SBX_ZYGOTE_EXIT_NORMAL);

  ck_assert_int_eq(p.no_new_privs, 1);
  ck_assert_int_eq(p.capget_rc, 0);
  for (int i = 0; i < 2; i++) {
    ck_assert_uint_eq(p.effective[i], 0);
    ck_assert_uint_eq(p.permitted[i], 0);
    ck_assert_uint_eq(p.inheritable[i], 0);
  }
  ck_assert_int_gt(p.bounding_checked, CAP_LAST_CAP);
  ck_assert_int_eq(p.bounding_failed, 0);
  ck_assert_int_eq(p.bounding_held, 0);
  ck_assert_int_eq(p.ambient_failed, 0);
  ck_assert_int_eq(p.ambient_held, 0);
  uid_t uid = escape_expected_uid();
  gid_t gid = escape_expected_gid();
  for (int i = 0; i < 3; i++) {
    ck_assert_uint_eq(p.uid[i], uid);
    ck_assert_uint_eq(p.gid[i], gid);
  }
  ck_assert_uint_eq(uid_map[0], uid);
  ck_assert_uint_eq(uid_map[1], uid);
  ck_assert_uint_eq(uid_map[2], 1);
  ck_assert_uint_eq(gid_map[0], gid);
  ck_assert_uint_eq(gid_map[1], gid);
  ck_assert_uint_eq(gid_map[2], 1);
  ck_assert_int_eq(p.n_groups, 0);

  /* Control: the same probe sees privileges where they exist. */
  privileges c;
  ck_assert(escape_run_unsandboxed(true, probe_privileges, NULL, &c, sizeof c));
  ck_assert_int_eq(c.no_new_privs, 0);
  ck_assert_uint_ne(c.effective[0], 0);
  ck_assert_int_eq(c.bounding_failed, 0);
  ck_assert_int_eq(c.bounding_held, c.bounding_checked);
}
END_TEST

/* ---- S34 ----------------------------------------------------------------- */

START_TEST(worker_cannot_open_the_zygote_or_host_binary) {
  pid_t zygote = sbx_zygote_pid(escape_zygote());
  /* Inside, the zygote is pid 1 (undumpable: EACCES even without the
   * filter) and the host's pid names nothing (ENOENT). */
  const struct {
    long pid;
    int control_errno;
  } inside[] = {{1, EACCES}, {getpid(), ENOENT}};
  for (size_t i = 0; i < G_N_ELEMENTS(inside); i++) {
    request req = {.id = A_OPEN, .flags = O_WRONLY};
    g_snprintf(req.path, sizeof req.path, "/proc/%ld/exe", inside[i].pid);
    /* Every open traps; without a broker to ask, the worker dies with a
     * report of it. */
    escape_call s = run_in("sandboxed", &req);
    ck_assert_msg(!s.o.wrote, "%s: %ld", req.path, s.r.ret);
    ck_assert_int_eq(s.o.exit.reason, SBX_ZYGOTE_EXIT_POLICY_KILL);
    ck_assert_int_eq(s.o.exit.syscall_nr, __NR_openat);
    /* With the broker, as workers run: it denies (no rule names /proc). */
    escape_call b = run_in("brokered", &req);
    ck_assert_msg(b.o.wrote, "%s", b.o.exit.detail);
    ck_assert_int_eq(b.r.ret, -1);
    ck_assert_int_eq(b.r.err, EACCES);
    escape_call c = run_in("control", &req);
    ck_assert_msg(c.o.wrote, "%s", c.o.exit.detail);
    ck_assert_int_eq(c.r.ret, -1);
    ck_assert_int_eq(c.r.err, inside[i].control_errno);
  }
  /* Positive control: the host opens its own binary for reading, and the
   * zygote's when it is root. The zygote is undumpable, so even its own
   * unprivileged user cannot (EACCES). */
  request own = {.id = A_OPEN, .flags = O_RDONLY};
  g_snprintf(own.path, sizeof own.path, "/proc/%d/exe", (int)getpid());
  escape_result r;
  ck_assert(escape_run_unsandboxed(false, probe_attack, &own, &r, sizeof r));
  ck_assert_msg(r.ret >= 0, "%s: errno %ld", own.path, r.err);
  request zyg = {.id = A_OPEN, .flags = O_RDONLY};
  g_snprintf(zyg.path, sizeof zyg.path, "/proc/%d/exe", (int)zygote);
  ck_assert(escape_run_unsandboxed(false, probe_attack, &zyg, &r, sizeof r));
  if (geteuid() == 0)
    ck_assert_msg(r.ret >= 0, "%s: errno %ld", zyg.path, r.err);
  else
    ck_assert_msg(r.ret == -1 && r.err == EACCES, "%s: %ld errno %ld", zyg.path,
                  r.ret, r.err);
}
END_TEST

/* ---- S35 ----------------------------------------------------------------- */

static void write_text(const char *path, const char *text) {
  GError *error = NULL;
  if (!g_file_set_contents(path, text, -1, &error))
    ck_abort_msg("%s", error->message);
}

static const char kStrictLayer[] =
    "# A second layer: getppid refused.\n"
    "@default allow\n"
    "getppid: return EPERM\n";
static const char kLaxLayer[] =
    "# The same layer, relaxed after the sandbox started.\n"
    "@default allow\n"
    "getppid: 1\n";

START_TEST(policy_is_read_once_before_the_sandbox_starts) {
  g_autofree char *dir = g_dir_make_tmp("sbx-escape-XXXXXX", NULL);
  ck_assert_ptr_nonnull(dir);
  g_autofree char *profile = g_build_filename(dir, "t.profile", NULL);
  g_autofree char *layer = g_build_filename(dir, "t.policy", NULL);
  g_autofree char *renderer =
      g_strdup(sbx_builtin_find("renderer.profile")->text);
  ck_assert_ptr_nonnull(renderer);
  /* The renderer profile with a second seccomp layer from the temp dir. */
  g_autofree char *text = NULL;
  {
    g_auto(GStrv) parts = g_strsplit(renderer, "seccomp=renderer.policy", 2);
    ck_assert_ptr_nonnull(parts[1]);
    text = g_strconcat(parts[0], "seccomp=renderer.policy;t.policy", parts[1],
                       NULL);
  }
  write_text(profile, text);
  write_text(layer, kStrictLayer);
  escape_start_profile(profile, entry);

  request getppid_req = {.id = A_GETPPID};
  escape_call before = run_in("sandboxed", &getppid_req);
  ck_assert_msg(before.o.wrote, "%s", before.o.exit.detail);
  ck_assert_int_eq(before.r.ret, -1);
  ck_assert_int_eq(before.r.err, EPERM);

  /* The worker cannot reach the files: it traps (and, without a broker,
   * dies; with one, is denied); without the filter the path does not exist
   * in its root. */
  request open_req = {.id = A_OPEN, .flags = O_RDWR};
  g_strlcpy(open_req.path, layer, sizeof open_req.path);
  ck_assert_uint_lt(strlen(layer), sizeof open_req.path);
  escape_call s = run_in("sandboxed", &open_req);
  ck_assert(!s.o.wrote);
  ck_assert_int_eq(s.o.exit.reason, SBX_ZYGOTE_EXIT_POLICY_KILL);
  escape_call b = run_in("brokered", &open_req);
  ck_assert_msg(b.o.wrote, "%s", b.o.exit.detail);
  ck_assert_int_eq(b.r.ret, -1);
  ck_assert_int_eq(b.r.err, EACCES);
  escape_call c = run_in("control", &open_req);
  ck_assert_msg(c.o.wrote, "%s", c.o.exit.detail);
  ck_assert_int_eq(c.r.err, ENOENT);

  /* Changed on disk after the start: a new worker keeps the old policy. */
  write_text(layer, kLaxLayer);
  escape_call after = run_in("sandboxed", &getppid_req);
  ck_assert_msg(after.o.wrote, "%s", after.o.exit.detail);
  ck_assert_int_eq(after.r.ret, -1);
  ck_assert_int_eq(after.r.err, EPERM);
  escape_stop();

  /* Control: read again, the change is real and takes effect. */
  escape_start_profile(profile, entry);
  escape_call reread = run_in("sandboxed", &getppid_req);
  ck_assert_msg(reread.o.wrote, "%s", reread.o.exit.detail);
  ck_assert_int_eq(reread.r.ret, 1);
  escape_stop();

  g_unlink(profile);
  g_unlink(layer);
  g_rmdir(dir);
}
END_TEST

static Suite *escape_process_suite(void) {
  Suite *s = suite_create("escape_process");
  TCase *tc = tcase_create("renderer");
  tcase_set_timeout(tc, 30);
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, worker_cannot_trace_or_reach_into_any_process);
  tcase_add_test(tc, unsandboxed_process_can_trace_and_reach_into_a_peer);
  tcase_add_test(tc, worker_cannot_see_the_host_pid);
  tcase_add_test(
      tc, brokered_worker_gets_the_brokers_answer_for_statx_and_faccessat2);
#if !defined(__SANITIZE_ADDRESS__)
  tcase_add_test(tc, thread_started_inside_the_worker_is_filtered_too);
#endif
  tcase_add_test(tc, forged_sigsys_is_ignored_by_the_handler);
  tcase_add_test(tc, blocking_or_ignoring_sigsys_turns_a_trap_into_death);
  tcase_add_test(tc, worker_has_no_privilege_of_any_kind);
  tcase_add_test(tc, worker_cannot_open_the_zygote_or_host_binary);
  suite_add_tcase(s, tc);
  TCase *own = tcase_create("own zygote");
  tcase_set_timeout(own, 30);
  tcase_add_test(own, worker_holds_only_the_descriptors_it_was_given);
  tcase_add_test(own, policy_is_read_once_before_the_sandbox_starts);
  suite_add_tcase(s, own);
  return s;
}

int main(void) {
  return escape_main(escape_process_suite());
}
