/* Escape attempts inside real workers: forked by a real zygote, under the
 * built-in renderer profile (its policy, rlimits and Landlock) and every
 * namespace. Each attempt has a positive control: the same operation
 * unsandboxed, where it must not fail the way the sandbox makes it fail.
 * The single-call attacks of S9, S11, S12, S13 and the modern-syscall
 * table of S21 (docs/policies.md) are one table, each row with the
 * verdict the policy promises and the process its control runs in.
 * (File-system attacks, which need the broker, are in the broker's suites;
 * attacks on other processes and on the worker's own state are in
 * escape_process_test.c.)
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib.h>
#include <linux/io_uring.h>
#include <linux/seccomp.h>
#include <linux/userfaultfd.h>

#include "sandbox/base/syscalls.h"
#include "sandbox/tests/zygote/escape_util.h"

enum {
  A_SOCKET_INET = 1,
  A_FORK,
  A_UNSHARE_USER,
  A_KILL_ZYGOTE,
  A_KILL_SELF,
  A_IO_URING,
  A_MEMFD,
  A_CLONE3,
  A_PRCTL_PTRACER,
  A_SHMGET,
  A_PERSONALITY,
  A_TIOCSTI_HIGH_BITS,
  A_THREAD,
  A_X32,
  A_INT80,
  A_SYSCALL, /* a row of the syscall table */
};

static void *thread_fn(void *arg) {
  return arg;
}

/* Returns the call's result; errno is written next to it. */
static long attack(int id) {
  switch (id) {
    case A_SOCKET_INET:
      return socket(AF_INET, SOCK_STREAM, 0);
    case A_FORK: {
      pid_t p = fork();
      if (p == 0)
        _exit(0);
      return p;
    }
    case A_UNSHARE_USER:
      return unshare(CLONE_NEWUSER);
    case A_KILL_ZYGOTE:
      return kill(getppid(), 0);
    case A_KILL_SELF:
      return kill(getpid(), 0);
    case A_IO_URING: {
      struct io_uring_params params;
      memset(&params, 0, sizeof params);
      return syscall(__NR_io_uring_setup, 1, &params);
    }
    case A_MEMFD:
      return syscall(__NR_memfd_create, "x", 0);
    case A_CLONE3:
      return syscall(__NR_clone3, NULL, 0);
    case A_PRCTL_PTRACER:
      return prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
    case A_SHMGET:
      return shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600);
    case A_PERSONALITY:
      return personality(ADDR_NO_RANDOMIZE);
    case A_TIOCSTI_HIGH_BITS: {
      char c = 'x';
      return syscall(__NR_ioctl, 0, TIOCSTI | (1ul << 32), &c);
    }
    case A_THREAD: {
      pthread_t t;
      int rc = pthread_create(&t, NULL, thread_fn, NULL);
      if (rc == 0)
        pthread_join(t, NULL);
      errno = rc;
      return rc ? -1 : 0;
    }
    case A_X32:
      return syscall(0x40000000 | __NR_getpid);
    case A_INT80: {
      long ret = 20; /* i386 getpid */
      __asm__ volatile("int $0x80" : "+a"(ret) : : "memory");
      return ret;
    }
    default:
      return -2;
  }
}

/* ---- The syscall table ---------------------------------------------------
 *
 * Arguments that must be pointers are written as markers and replaced in
 * the process that makes the call: the worker is a fork of this binary, so
 * the buffers are at the same addresses there. */
#define P_BUF ((long)0x5bf0000000000001)    /* 4 KiB of zeroes, writable */
#define P_BUF2 ((long)0x5bf0000000000002)   /* another one */
#define P_ROOT ((long)0x5bf0000000000003)   /* "/" */
#define P_NOFILE ((long)0x5bf0000000000004) /* a path that does not exist */
#define P_EMPTY ((long)0x5bf0000000000005)  /* "" */

static char scratch[2][4096];

static long resolve_arg(long a) {
  switch (a) {
    case P_BUF:
      return (long)scratch[0];
    case P_BUF2:
      return (long)scratch[1];
    case P_ROOT:
      return (long)"/";
    case P_NOFILE:
      return (long)"/nonexistent-sbx-escape-test";
    case P_EMPTY:
      return (long)"";
    default:
      return a;
  }
}

typedef enum {
  V_ERRNO, /* returns -1 with errno `err` */
  V_ALLOW, /* reaches the kernel: the same result as in the control worker */
  V_KILL,  /* trapped: the worker dies by SIGSYS with a report of the call */
} verdict;

typedef enum {
  C_WORKER, /* a "control" worker: the same namespaces, no seccomp */
  C_OWN_NS, /* a process holding every capability in its own namespaces */
  C_HOST,   /* the test process itself */
} control;

typedef struct {
  int item;         /* its entry in docs/threat-model.md */
  const char *name; /* resolved with the policy's own syscall table */
  int nr;           /* used when name is NULL */
  long args[6];
  verdict verdict;
  int err;
  control control;
  /* The kernel checks a capability in the initial user namespace before it
   * looks at any argument: only root's control reaches the arguments. */
  bool needs_init_root;
  /* Kernels may be built without it (then the control sees ENOSYS too, and
   * the compiled program alone shows the verdict is the policy's). */
  bool optional_in_kernel;
} syscall_case;

/* Arguments are chosen so that the call, where it runs, fails harmlessly
 * with an error other than the sandbox's (EFAULT, EBADF, EINVAL, ...). */
/* clang-format off */
static const syscall_case kCases[] = {
    /* S9: mounts and roots. */
    {9, "mount", 0, {0, 0, 0, 0, 0, 0}, V_ERRNO, EPERM, C_OWN_NS, false},
    {9, "umount2", 0, {P_ROOT, 0xffff0000}, V_ERRNO, EPERM, C_OWN_NS, false},
    {9, "pivot_root", 0, {0, 0}, V_ERRNO, EPERM, C_OWN_NS, false},
    {9, "chroot", 0, {0}, V_ERRNO, EPERM, C_OWN_NS, false},
    {9, "fsopen", 0, {0, 0}, V_ERRNO, EPERM, C_OWN_NS, false},
    {9, "fsconfig", 0, {-1, 0, 0, 0, 0}, V_ERRNO, EPERM, C_OWN_NS, false},
    {9, "fsmount", 0, {-1, 0, 0}, V_ERRNO, EPERM, C_OWN_NS, false},
    {9, "fspick", 0, {-1, 0, 0}, V_ERRNO, EPERM, C_OWN_NS, false},
    {9, "move_mount", 0, {-1, 0, -1, 0, 0}, V_ERRNO, EPERM, C_OWN_NS, false},
    {9, "open_tree", 0, {-1, 0, 0xffffffff}, V_ERRNO, EPERM, C_OWN_NS, false},
    {9, "mount_setattr", 0, {-1, 0, 0xffffffff, 0, 0}, V_ERRNO, EPERM, C_OWN_NS, false},
    /* S11: file handles. */
    {11, "name_to_handle_at", 0, {AT_FDCWD, P_ROOT, P_BUF, P_BUF2, 0}, V_ERRNO, EPERM, C_WORKER, false},
    {11, "open_by_handle_at", 0, {-1, P_BUF, 0}, V_ERRNO, EPERM, C_WORKER, false},
    /* S12. */
    {12, "userfaultfd", 0, {UFFD_USER_MODE_ONLY | O_CLOEXEC}, V_ERRNO, EPERM, C_WORKER, false},
    /* S13: kernel programming, keys, modules, machine state. */
    {13, "perf_event_open", 0, {0, 0, -1, -1, 0}, V_ERRNO, EPERM, C_WORKER, false},
    {13, "bpf", 0, {0, 0, 8}, V_ERRNO, EPERM, C_WORKER, false},
    {13, "keyctl", 0, {9999, 0, 0, 0, 0}, V_ERRNO, EPERM, C_WORKER, false},
    {13, "add_key", 0, {0, 0, 0, 0, 0}, V_ERRNO, EPERM, C_WORKER, false},
    {13, "request_key", 0, {0, 0, 0, 0}, V_ERRNO, EPERM, C_WORKER, false},
    {13, "kexec_load", 0, {0, 1000, 0, 0}, V_ERRNO, EPERM, C_HOST, true, true},
    {13, "kexec_file_load", 0, {-1, -1, 0, 0, 0}, V_ERRNO, EPERM, C_HOST, true, true},
    {13, "init_module", 0, {0, 0, P_EMPTY}, V_ERRNO, EPERM, C_HOST, true, true},
    {13, "finit_module", 0, {-1, P_EMPTY, 0}, V_ERRNO, EPERM, C_HOST, true, true},
    {13, "delete_module", 0, {0, 0}, V_ERRNO, EPERM, C_HOST, true, true},
    {13, "reboot", 0, {0, 0, 0, 0}, V_ERRNO, EPERM, C_OWN_NS, false},
    {13, "swapon", 0, {0, 0}, V_ERRNO, EPERM, C_HOST, true},
    {13, "swapoff", 0, {0}, V_ERRNO, EPERM, C_HOST, true},
    {13, "acct", 0, {P_NOFILE}, V_ERRNO, EPERM, C_HOST, true},
    {13, "iopl", 0, {4}, V_ERRNO, EPERM, C_WORKER, false, true},
    {13, "ioperm", 0, {0, 0, 1}, V_ERRNO, EPERM, C_WORKER, false, true},
    /* Q_SYNC on quota type 0x7f: no such type. */
    {13, "quotactl", 0, {(0x800001l << 8) | 0x7f, 0, 0, 0}, V_ERRNO, EPERM, C_WORKER, false},
    {13, "quotactl_fd", 0, {-1, 0, 0, 0}, V_ERRNO, EPERM, C_WORKER, false},
    /* S21: the modern-syscall table of docs/policies.md, in its order. */
    {21, "rseq", 0, {0, 0, 0xff, 0}, V_ALLOW, 0, C_WORKER, false},
    {21, "statx", 0, {AT_FDCWD, P_ROOT, 0, 0, P_BUF}, V_KILL, 0, C_WORKER, false},
    {21, "pidfd_send_signal", 0, {-1, 0, 0, 0}, V_ERRNO, ENOSYS, C_WORKER, false},
    {21, "io_uring_setup", 0, {0, P_BUF}, V_ERRNO, ENOSYS, C_WORKER, false},
    {21, "io_uring_enter", 0, {-1, 0, 0, 0, 0, 0}, V_ERRNO, ENOSYS, C_WORKER, false},
    {21, "io_uring_register", 0, {-1, 0, 0, 0}, V_ERRNO, ENOSYS, C_WORKER, false},
    {21, "pidfd_open", 0, {1, 0}, V_ERRNO, ENOSYS, C_WORKER, false},
    {21, "clone3", 0, {0, 0}, V_ERRNO, ENOSYS, C_WORKER, false},
    {21, "close_range", 0, {1000, 1001, 0}, V_ALLOW, 0, C_WORKER, false},
    {21, "openat2", 0, {AT_FDCWD, 0, 0, 0}, V_ERRNO, ENOSYS, C_WORKER, false},
    {21, "pidfd_getfd", 0, {-1, 0, 0}, V_ERRNO, ENOSYS, C_WORKER, false},
    {21, "faccessat2", 0, {AT_FDCWD, P_ROOT, 0, 0}, V_KILL, 0, C_WORKER, false},
    {21, "process_madvise", 0, {-1, 0, 0, 0, 0}, V_ERRNO, EPERM, C_WORKER, false},
    {21, "epoll_pwait2", 0, {-1, 0, 0, 0, 0, 0}, V_ALLOW, 0, C_WORKER, false},
    {21, "landlock_create_ruleset", 0, {0, 0, 1}, V_ALLOW, 0, C_WORKER, false},
    {21, "landlock_add_rule", 0, {-1, 1, 0, 0}, V_ALLOW, 0, C_WORKER, false},
    {21, "landlock_restrict_self", 0, {-1, 0}, V_ALLOW, 0, C_WORKER, false},
    {21, "memfd_secret", 0, {0xff}, V_ERRNO, ENOSYS, C_WORKER, false, true},
    {21, "process_mrelease", 0, {-1, 0}, V_ERRNO, EPERM, C_WORKER, false},
    {21, "futex_waitv", 0, {0, 0, 0, 0, 0}, V_ERRNO, ENOSYS, C_WORKER, false},
    {21, "set_mempolicy_home_node", 0, {0, 0, 0, 0}, V_ERRNO, EPERM, C_WORKER, false},
    {21, "cachestat", 0, {-1, 0, 0, 0}, V_ERRNO, ENOSYS, C_WORKER, false},
    {21, "fchmodat2", 0, {-1, 0, 0, 0xffff}, V_ERRNO, EPERM, C_WORKER, false},
    {21, "map_shadow_stack", 0, {0, 0, 0xff}, V_ERRNO, ENOSYS, C_WORKER, false, true},
    {21, "futex_wake", 0, {0, 0, 0, 0xff}, V_ERRNO, ENOSYS, C_WORKER, false},
    {21, "futex_wait", 0, {0, 0, 0, 0xff, 0, 0}, V_ERRNO, ENOSYS, C_WORKER, false},
    {21, "futex_requeue", 0, {0, 0xff, 0, 0}, V_ERRNO, ENOSYS, C_WORKER, false},
    {21, "statmount", 0, {0, 0, 0, 0}, V_ERRNO, ENOSYS, C_WORKER, false},
    {21, "listmount", 0, {0, 0, 0, 0}, V_ERRNO, ENOSYS, C_WORKER, false},
    {21, "lsm_get_self_attr", 0, {0, 0, 0, 0xff}, V_ERRNO, ENOSYS, C_WORKER, false},
    {21, "lsm_set_self_attr", 0, {0, 0, 0, 0xff}, V_ERRNO, ENOSYS, C_WORKER, false},
    {21, "lsm_list_modules", 0, {0, 0, 0xff}, V_ERRNO, ENOSYS, C_WORKER, false},
    {21, "mseal", 0, {0, 0, 1}, V_ALLOW, 0, C_WORKER, false},
    {21, "setxattrat", 0, {-1, 0, 0, 0, 0, 0}, V_KILL, 0, C_WORKER, false},
    {21, "getxattrat", 0, {-1, 0, 0, 0, 0, 0}, V_KILL, 0, C_WORKER, false},
    {21, "listxattrat", 0, {-1, 0, 0, 0, 0, 0}, V_KILL, 0, C_WORKER, false},
    {21, "removexattrat", 0, {-1, 0, 0, 0}, V_KILL, 0, C_WORKER, false},
    {21, "open_tree_attr", 0, {-1, 0, 0xffffffff, 0, 0}, V_KILL, 0, C_WORKER, false},
    {21, "file_getattr", 0, {-1, 0, 0, 0, 0}, V_KILL, 0, C_WORKER, false},
    {21, "file_setattr", 0, {-1, 0, 0, 0, 0}, V_KILL, 0, C_WORKER, false},
    {21, "listns", 0, {0, 0, 0, 0}, V_KILL, 0, C_WORKER, false},
    /* Newer than the table: not assigned yet. Never allowed. */
    {21, NULL, 471, {0}, V_KILL, 0, C_WORKER, false},
    {21, NULL, 472, {0}, V_KILL, 0, C_WORKER, false},
    {21, NULL, 473, {0}, V_KILL, 0, C_WORKER, false},
    {21, NULL, 474, {0}, V_KILL, 0, C_WORKER, false},
    {21, NULL, 475, {0}, V_KILL, 0, C_WORKER, false},
    {21, NULL, 476, {0}, V_KILL, 0, C_WORKER, false},
    {21, NULL, 477, {0}, V_KILL, 0, C_WORKER, false},
    {21, NULL, 478, {0}, V_KILL, 0, C_WORKER, false},
    {21, NULL, 479, {0}, V_KILL, 0, C_WORKER, false},
    {21, NULL, 480, {0}, V_KILL, 0, C_WORKER, false},
};
/* clang-format on */

/* Runs in workers too: no Check calls (their messages would go to
 * whatever descriptor now has Check's number). */
static int case_nr(const syscall_case *c) {
  return c->name ? sbx_syscall_number(c->name) : c->nr;
}

static void case_args(const syscall_case *c, long a[6]) {
  for (int i = 0; i < 6; i++)
    a[i] = resolve_arg(c->args[i]);
}

static escape_result run_case(int index) {
  const syscall_case *c = &kCases[index];
  long a[6];
  case_args(c, a);
  errno = 0;
  long r = syscall(case_nr(c), a[0], a[1], a[2], a[3], a[4], a[5]);
  escape_result out = {r, r == -1 ? errno : 0};
  return out;
}

/* A positive control's probe: arg is the row index. */
static void probe_case(int reply_fd, const void *arg) {
  escape_result r = run_case(*(const int *)arg);
  escape_reply_to(reply_fd, &r, sizeof r);
}

/* ---- The worker --------------------------------------------------------- */

static int entry_attack(const sbx_zygote_worker *args) {
  int in[2] = {0, 0};
  memcpy(in, args->payload, sizeof in);
  escape_result out;
  if (in[0] == A_SYSCALL) {
    out = run_case(in[1]);
  } else {
    errno = 0;
    out.ret = attack(in[0]);
    out.err = out.ret < 0 ? errno : 0;
  }
  escape_reply(&out, sizeof out);
  return 0;
}

static void setup(void) {
  escape_start(entry_attack);
}

static void teardown(void) {
  escape_stop();
}

static escape_call run_in(const char *type, int id, int index) {
  int in[2] = {id, index};
  return escape_run_call(type, in, sizeof in);
}

static void expect_errno(int id, int err) {
  escape_call s = run_in("sandboxed", id, 0);
  ck_assert_msg(s.o.wrote, "attack %d: worker ended: %s", id, s.o.exit.detail);
  ck_assert_int_eq(s.r.ret, -1);
  ck_assert_int_eq(s.r.err, err);
  escape_call c = run_in("control", id, 0);
  ck_assert_msg(c.o.wrote, "control %d: %s", id, c.o.exit.detail);
  ck_assert_msg(!(c.r.ret == -1 && c.r.err == err),
                "control %d fails the same way: errno %ld", id, c.r.err);
}

static void expect_kill(int id) {
  escape_call s = run_in("sandboxed", id, 0);
  ck_assert(!s.o.wrote);
  ck_assert_int_eq(s.o.exit.signal, SIGSYS);
}

static escape_result control_of(int index) {
  const syscall_case *c = &kCases[index];
  escape_result r = {0, 0};
  if (c->control == C_WORKER) {
    escape_call o = run_in("control", A_SYSCALL, index);
    ck_assert_msg(o.o.wrote, "%s: control worker ended: %s", c->name,
                  o.o.exit.detail);
    return o.r;
  }
  ck_assert_msg(escape_run_unsandboxed(c->control == C_OWN_NS, probe_case,
                                       &index, &r, sizeof r),
                "%s: control process wrote nothing", c->name);
  return r;
}

/* One row: the verdict in a sandboxed worker, then its control. */
static void check_case(int index) {
  const syscall_case *c = &kCases[index];
  int nr = case_nr(c);
  const char *name = c->name ? c->name : "unassigned";
  ck_assert_msg(nr >= 0, "%s: not in the syscall table", name);
  long a[6];
  case_args(c, a);
  uint32_t action = escape_sandboxed_action(nr, a);
  uint32_t want = c->verdict == V_ALLOW  ? SECCOMP_RET_ALLOW
                  : c->verdict == V_KILL ? SECCOMP_RET_TRAP
                                         : SECCOMP_RET_ERRNO | (uint32_t)c->err;
  ck_assert_msg(action == want,
                "%s(%d): compiled program returns 0x%x, want 0x%x", name, nr,
                action, want);
  escape_call s = run_in("sandboxed", A_SYSCALL, index);
  escape_result ctl = control_of(index);
  switch (c->verdict) {
    case V_ERRNO:
      ck_assert_msg(s.o.wrote, "%s(%d): worker ended: %s", name, nr,
                    s.o.exit.detail);
      ck_assert_msg(s.r.ret == -1 && s.r.err == c->err,
                    "%s(%d): got %ld errno %ld, want errno %d", name, nr,
                    s.r.ret, s.r.err, c->err);
      if (c->optional_in_kernel && ctl.ret == -1 && ctl.err == ENOSYS) {
        /* This kernel lacks the call; the program check above stands. */
      } else if (c->needs_init_root && geteuid() != 0) {
        /* The kernel itself refuses: the control shows only that. */
        ck_assert_msg(ctl.ret == -1 && ctl.err == EPERM,
                      "%s(%d): unprivileged control got %ld errno %ld", name,
                      nr, ctl.ret, ctl.err);
      } else {
        ck_assert_msg(!(ctl.ret == -1 && ctl.err == c->err),
                      "%s(%d): the control fails the same way (errno %ld)",
                      name, nr, ctl.err);
      }
      break;
    case V_ALLOW:
      ck_assert_msg(s.o.wrote, "%s(%d): worker ended: %s", name, nr,
                    s.o.exit.detail);
      ck_assert_msg(s.r.ret == ctl.ret && s.r.err == ctl.err,
                    "%s(%d): sandboxed %ld errno %ld, control %ld errno %ld",
                    name, nr, s.r.ret, s.r.err, ctl.ret, ctl.err);
      break;
    case V_KILL:
      ck_assert_msg(!s.o.wrote, "%s(%d) returned %ld errno %ld", name, nr,
                    s.r.ret, s.r.err);
      ck_assert_msg(s.o.exit.reason == SBX_ZYGOTE_EXIT_POLICY_KILL &&
                        s.o.exit.signal == SIGSYS && s.o.exit.syscall_nr == nr,
                    "%s(%d): %s", name, nr, s.o.exit.detail);
      break;
  }
}

START_TEST(worker_cannot_create_an_inet_socket) {
  expect_errno(A_SOCKET_INET, EPERM); /* S18 */
}
END_TEST

START_TEST(worker_cannot_fork) {
  expect_errno(A_FORK, EPERM); /* S7 */
}
END_TEST

START_TEST(worker_cannot_create_a_user_namespace) {
  expect_errno(A_UNSHARE_USER, EPERM); /* S8 */
}
END_TEST

START_TEST(worker_cannot_signal_its_zygote) {
  expect_errno(A_KILL_ZYGOTE, EPERM); /* S19 */
}
END_TEST

START_TEST(worker_can_signal_itself) {
  escape_call s = run_in("sandboxed", A_KILL_SELF, 0);
  ck_assert(s.o.wrote);
  ck_assert_int_eq(s.r.ret, 0);
}
END_TEST

START_TEST(worker_cannot_set_up_io_uring) {
  expect_errno(A_IO_URING, ENOSYS); /* S6 */
}
END_TEST

START_TEST(worker_cannot_create_a_memfd) {
  expect_errno(A_MEMFD, EPERM); /* S14 */
}
END_TEST

START_TEST(worker_gets_enosys_from_clone3_and_threads_still_work) {
  expect_errno(A_CLONE3, ENOSYS); /* S7 */
#if !defined(__SANITIZE_ADDRESS__)
  /* ASan's thread start reads /proc/self/maps with open(), which only the
   * broker serves, and this suite runs without one. */
  escape_call s = run_in("sandboxed", A_THREAD, 0);
  ck_assert_msg(s.o.wrote, "%s", s.o.exit.detail);
  ck_assert_int_eq(s.r.ret, 0);
#endif
}
END_TEST

START_TEST(worker_cannot_allow_any_tracer) {
  expect_errno(A_PRCTL_PTRACER, EPERM); /* S15 */
}
END_TEST

START_TEST(worker_cannot_use_sysv_shared_memory) {
  expect_errno(A_SHMGET, EPERM); /* S20 */
}
END_TEST

START_TEST(worker_cannot_turn_off_address_randomisation) {
  expect_errno(A_PERSONALITY, EPERM); /* S15 */
}
END_TEST

START_TEST(worker_cannot_inject_terminal_input_with_junk_high_bits) {
  expect_errno(A_TIOCSTI_HIGH_BITS, EPERM); /* S10, S4 */
}
END_TEST

START_TEST(worker_is_killed_for_an_x32_system_call) {
  expect_kill(A_X32); /* S1 */
}
END_TEST

START_TEST(worker_is_killed_for_an_i386_system_call) {
  /* S2. Kernels without i386 emulation fault on int $0x80 before seccomp
   * runs (SIGSEGV); then the control shows that and the worker must die
   * just the same, never return. */
  escape_call c = run_in("control", A_INT80, 0);
  if (c.o.wrote) {
    expect_kill(A_INT80);
  } else {
    escape_call s = run_in("sandboxed", A_INT80, 0);
    ck_assert(!s.o.wrote);
  }
}
END_TEST

static void check_item(int item) {
  int n = 0;
  for (size_t i = 0; i < G_N_ELEMENTS(kCases); i++) {
    if (kCases[i].item == item) {
      check_case((int)i);
      n++;
    }
  }
  ck_assert_int_gt(n, 0);
}

START_TEST(worker_cannot_mount_or_change_its_root) {
  check_item(9); /* S9 */
}
END_TEST

START_TEST(worker_cannot_use_file_handles) {
  check_item(11); /* S11 */
}
END_TEST

START_TEST(worker_cannot_create_a_userfaultfd) {
  check_item(12); /* S12 */
}
END_TEST

START_TEST(worker_cannot_program_the_kernel_or_change_machine_state) {
  check_item(13); /* S13 */
}
END_TEST

START_TEST(modern_and_unassigned_syscalls_get_their_documented_verdicts) {
  check_item(21); /* S21 */
}
END_TEST

static Suite *escape_suite(void) {
  Suite *s = suite_create("escape");
  TCase *tc = tcase_create("renderer");
  tcase_set_timeout(tc, 30);
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, worker_cannot_create_an_inet_socket);
  tcase_add_test(tc, worker_cannot_fork);
  tcase_add_test(tc, worker_cannot_create_a_user_namespace);
  tcase_add_test(tc, worker_cannot_signal_its_zygote);
  tcase_add_test(tc, worker_can_signal_itself);
  tcase_add_test(tc, worker_cannot_set_up_io_uring);
  tcase_add_test(tc, worker_cannot_create_a_memfd);
  tcase_add_test(tc, worker_gets_enosys_from_clone3_and_threads_still_work);
  tcase_add_test(tc, worker_cannot_allow_any_tracer);
  tcase_add_test(tc, worker_cannot_use_sysv_shared_memory);
  tcase_add_test(tc, worker_cannot_turn_off_address_randomisation);
  tcase_add_test(tc, worker_cannot_inject_terminal_input_with_junk_high_bits);
  tcase_add_test(tc, worker_is_killed_for_an_x32_system_call);
  tcase_add_test(tc, worker_is_killed_for_an_i386_system_call);
  suite_add_tcase(s, tc);
  TCase *table = tcase_create("syscall table");
  tcase_set_timeout(table, 60);
  tcase_add_checked_fixture(table, setup, teardown);
  tcase_add_test(table, worker_cannot_mount_or_change_its_root);
  tcase_add_test(table, worker_cannot_use_file_handles);
  tcase_add_test(table, worker_cannot_create_a_userfaultfd);
  tcase_add_test(table,
                 worker_cannot_program_the_kernel_or_change_machine_state);
  tcase_add_test(table,
                 modern_and_unassigned_syscalls_get_their_documented_verdicts);
  suite_add_tcase(s, table);
  return s;
}

int main(void) {
  return escape_main(escape_suite());
}
