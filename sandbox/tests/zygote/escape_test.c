/* Escape attempts inside real workers: forked by a real zygote, under the
 * built-in renderer policy, Landlock and every namespace. Each attempt has
 * a positive control: the same operation in a worker of a type with no
 * seccomp layer, where it must not fail the way the sandbox makes it fail.
 * (File-system attacks, which need the broker, are in the broker's suites.)
 */
#include <check.h>
#include <errno.h>
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

#include "sandbox/linux/seccomp/bpf.h"
#include "sandbox/linux/zygote/zygote.h"
#include "sandbox/policy/builtin/builtin.h"

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

static int entry_attack(const sbx_worker_args *args) {
  int id = 0;
  memcpy(&id, args->payload, sizeof id);
  errno = 0;
  long r = attack(id);
  long out[2] = {r, r < 0 ? errno : 0};
  if (write(3, out, sizeof out) != sizeof out)
    return 91;
  return 0;
}

typedef struct {
  long ret;
  long err;
  sbx_worker_exit exit;
  bool wrote;
} outcome;

static sbx_zygote *zygote;
static sbx_bpf_program renderer_prog;

static void setup(void) {
  GError *error = NULL;
  sbx_policy *p = sbx_builtin_policy("renderer", &error);
  if (!p)
    ck_abort_msg("%s", error->message);
  if (!sbx_bpf_compile(p, &renderer_prog, &error))
    ck_abort_msg("%s", error->message);
  sbx_policy_free(p);
  static const char *names[] = {"renderer.policy"};
  sbx_zygote_type types[] = {
      {.name = "sandboxed",
       .entry = entry_attack,
       .layers = &renderer_prog,
       .layer_names = names,
       .n_layers = 1,
       .landlock = true},
      {.name = "control", .entry = entry_attack},
  };
  sbx_zygote_config config = {.types = types, .n_types = 2};
  if (!sbx_zygote_start(&config, &zygote, &error))
    ck_abort_msg("%s", error->message);
}

static void teardown(void) {
  sbx_zygote_stop(zygote);
  sbx_bpf_program_clear(&renderer_prog);
}

static outcome run_in(const char *type, int id) {
  outcome o;
  memset(&o, 0, sizeof o);
  int out[2];
  ck_assert_int_eq(pipe(out), 0);
  int fds[] = {0, 1, 2, out[1]};
  sbx_zygote_spawn_request req = {.process_type = type,
                                  .payload = &id,
                                  .payload_len = sizeof id,
                                  .fds = fds,
                                  .n_fds = 4,
                                  .broker_channel = -1};
  pid_t pid;
  GError *error = NULL;
  if (!sbx_zygote_spawn(zygote, &req, &pid, &error))
    ck_abort_msg("%s", error->message);
  close(out[1]);
  long got[2];
  o.wrote = read(out[0], got, sizeof got) == sizeof got;
  close(out[0]);
  if (o.wrote) {
    o.ret = got[0];
    o.err = got[1];
  }
  if (!sbx_zygote_wait(zygote, pid, 20000, &o.exit, &error))
    ck_abort_msg("%s", error->message);
  return o;
}

static void expect_errno(int id, int err) {
  outcome s = run_in("sandboxed", id);
  ck_assert_msg(s.wrote, "attack %d: worker ended: %s", id, s.exit.detail);
  ck_assert_int_eq(s.ret, -1);
  ck_assert_int_eq(s.err, err);
  outcome c = run_in("control", id);
  ck_assert_msg(c.wrote, "control %d: %s", id, c.exit.detail);
  ck_assert_msg(!(c.ret == -1 && c.err == err),
                "control %d fails the same way: errno %ld", id, c.err);
}

static void expect_kill(int id) {
  outcome s = run_in("sandboxed", id);
  ck_assert(!s.wrote);
  ck_assert_int_eq(s.exit.signal, SIGSYS);
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
  outcome s = run_in("sandboxed", A_KILL_SELF);
  ck_assert(s.wrote);
  ck_assert_int_eq(s.ret, 0);
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
  outcome s = run_in("sandboxed", A_THREAD);
  ck_assert_msg(s.wrote, "%s", s.exit.detail);
  ck_assert_int_eq(s.ret, 0);
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
  outcome c = run_in("control", A_INT80);
  if (c.wrote) {
    expect_kill(A_INT80);
  } else {
    outcome s = run_in("sandboxed", A_INT80);
    ck_assert(!s.wrote);
  }
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
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(escape_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
