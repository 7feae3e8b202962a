/* The x86-64 system call table: names and numbers against libseccomp,
 * the supplement of new numbers, argument counts, and the int-sized
 * argument table against what the running kernel really reads.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib.h>
#include <seccomp.h>

#include "sandbox/base/syscalls.h"

/* Junk a 64-bit register can carry above an int-sized argument. */
#define HIGH_JUNK (UINT64_C(1) << 32)

START_TEST(syscall_names_and_numbers_round_trip) {
  int named = 0;
  for (int nr = 0; nr < sbx_syscall_max(); nr++) {
    const char *name = sbx_syscall_name(nr);
    if (name == NULL)
      continue;
    named++;
    ck_assert_msg(sbx_syscall_number(name) == nr, "%s: %d != %d", name,
                  sbx_syscall_number(name), nr);
  }
  ck_assert_int_ge(named, 370);
  ck_assert_int_eq(sbx_syscall_number("read"), 0);
  ck_assert_int_eq(sbx_syscall_number("openat"), 257);
  ck_assert_str_eq(sbx_syscall_name(59), "execve");
}
END_TEST

START_TEST(syscall_table_agrees_with_libseccomp_on_every_name_it_knows) {
  int checked = 0;
  /* Every number libseccomp can name must be that name's number here. */
  for (int nr = 0; nr < 1024; nr++) {
    char *name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_X86_64, nr);
    if (name == NULL)
      continue;
    ck_assert_msg(sbx_syscall_number(name) == nr,
                  "libseccomp says %s is %d, sbx says %d", name, nr,
                  sbx_syscall_number(name));
    ck_assert_str_eq(sbx_syscall_name(nr), name);
    free(name);
    checked++;
  }
  /* And every sbx name libseccomp knows must have the same number. */
  for (int nr = 0; nr < sbx_syscall_max(); nr++) {
    const char *name = sbx_syscall_name(nr);
    if (name == NULL)
      continue;
    int theirs = seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86_64, name);
    if (theirs == __NR_SCMP_ERROR)
      continue; /* newer than libseccomp 2.5.4 */
    ck_assert_msg(theirs == nr, "%s: libseccomp %d, sbx %d", name, theirs, nr);
  }
  ck_assert_int_ge(checked, 350);
}
END_TEST

START_TEST(syscall_table_knows_numbers_newer_than_the_build_headers) {
  static const struct {
    const char *name;
    int nr;
  } kNew[] = {
      {"cachestat", 451},         {"fchmodat2", 452},
      {"map_shadow_stack", 453},  {"futex_wake", 454},
      {"futex_wait", 455},        {"futex_requeue", 456},
      {"statmount", 457},         {"listmount", 458},
      {"lsm_get_self_attr", 459}, {"lsm_set_self_attr", 460},
      {"lsm_list_modules", 461},  {"mseal", 462},
      {"setxattrat", 463},        {"getxattrat", 464},
      {"listxattrat", 465},       {"removexattrat", 466},
      {"open_tree_attr", 467},    {"file_getattr", 468},
      {"file_setattr", 469},      {"listns", 470},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(kNew); i++) {
    ck_assert_int_eq(sbx_syscall_number(kNew[i].name), kNew[i].nr);
    ck_assert_str_eq(sbx_syscall_name(kNew[i].nr), kNew[i].name);
  }
  ck_assert_int_eq(sbx_syscall_max(), 471);
}
END_TEST

START_TEST(syscall_supplement_number_is_the_one_the_kernel_runs) {
  /* mseal(addr, 0, 0) on a page-aligned address is a no-op that returns
   * 0 on kernels with mseal; an unknown number would be ENOSYS. Positive
   * control: number 462 must not be ENOSYS on this 6.x kernel, and an
   * unassigned number is. */
  void *page = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ck_assert_ptr_ne(page, MAP_FAILED);
  long r = syscall(sbx_syscall_number("mseal"), page, 0, 0);
  ck_assert_msg(r == 0, "mseal: %ld (%s)", r, strerror(errno));
  errno = 0;
  ck_assert_int_eq(syscall(1000, 0, 0, 0), -1);
  ck_assert_int_eq(errno, ENOSYS);
  munmap(page, 4096);
}
END_TEST

START_TEST(syscall_lookups_report_unknown_names_and_numbers) {
  ck_assert_int_eq(sbx_syscall_number("notasyscall"), -1);
  ck_assert_int_eq(sbx_syscall_number(""), -1);
  ck_assert_int_eq(sbx_syscall_number(NULL), -1);
  ck_assert_int_eq(sbx_syscall_number("READ"), -1);
  ck_assert_ptr_null(sbx_syscall_name(-1));
  ck_assert_ptr_null(sbx_syscall_name(400)); /* the gap 335..423 */
  ck_assert_ptr_null(sbx_syscall_name(sbx_syscall_max()));
  ck_assert_ptr_null(sbx_syscall_name(0x40000000 | 39)); /* x32 getpid */
  ck_assert_int_eq(sbx_syscall_arg_count(-1), -1);
  ck_assert(!sbx_syscall_arg_is_32bit(-1, 0));
  ck_assert(!sbx_syscall_arg_is_32bit(400, 0));
}
END_TEST

START_TEST(syscall_argument_counts_follow_the_kernel_signatures) {
  ck_assert_int_eq(sbx_syscall_arg_count(sbx_syscall_number("getpid")), 0);
  ck_assert_int_eq(sbx_syscall_arg_count(sbx_syscall_number("read")), 3);
  ck_assert_int_eq(sbx_syscall_arg_count(sbx_syscall_number("ioctl")), 3);
  ck_assert_int_eq(sbx_syscall_arg_count(sbx_syscall_number("openat")), 4);
  ck_assert_int_eq(sbx_syscall_arg_count(sbx_syscall_number("clone")), 5);
  ck_assert_int_eq(sbx_syscall_arg_count(sbx_syscall_number("mmap")), 6);
  ck_assert_int_eq(sbx_syscall_arg_count(sbx_syscall_number("futex")), 6);
  ck_assert_int_eq(sbx_syscall_arg_count(sbx_syscall_number("mseal")), 3);
  ck_assert_int_eq(sbx_syscall_arg_count(sbx_syscall_number("clone3")), 2);
  /* Never implemented on x86-64: the count is not known. */
  ck_assert_int_eq(sbx_syscall_arg_count(sbx_syscall_number("tuxcall")), -1);
  int known = 0;
  for (int nr = 0; nr < sbx_syscall_max(); nr++) {
    int n = sbx_syscall_arg_count(nr);
    ck_assert_int_le(n, 6);
    if (n >= 0)
      known++;
    for (unsigned a = (unsigned)(n < 0 ? 0 : n); n >= 0 && a < 6; a++)
      ck_assert_msg(!sbx_syscall_arg_is_32bit(nr, a),
                    "%s: arg%u is past its argument count",
                    sbx_syscall_name(nr), a);
  }
  ck_assert_int_ge(known, 350);
}
END_TEST

START_TEST(syscall_int_sized_arguments_follow_the_kernel_signatures) {
  static const struct {
    const char *name;
    unsigned arg;
    bool is32;
  } kCases[] = {
      {"ioctl", 0, true},       {"ioctl", 1, true},
      {"ioctl", 2, false},      {"socket", 0, true},
      {"socket", 1, true},      {"socket", 2, true},
      {"socketpair", 0, true},  {"socketpair", 3, false},
      {"prctl", 0, true},       {"prctl", 1, false},
      {"fcntl", 0, true},       {"fcntl", 1, true},
      {"fcntl", 2, false},      {"mmap", 2, false},
      {"mmap", 3, false},       {"mmap", 4, true},
      {"mprotect", 2, false},   {"madvise", 2, true},
      {"futex", 1, true},       {"futex", 0, false},
      {"kill", 1, true},        {"tkill", 1, true},
      {"tgkill", 2, true},      {"setsockopt", 1, true},
      {"setsockopt", 2, true},  {"setsockopt", 3, false},
      {"getsockopt", 1, true},  {"getsockopt", 2, true},
      {"getrandom", 2, true},   {"getrandom", 1, false},
      {"personality", 0, true}, {"clone", 0, true},
      {"clone", 1, false},      {"clone3", 0, false},
      {"clone3", 1, false},     {"read", 0, true},
      {"readv", 0, true},       {"write", 2, false},
      {"openat", 0, true},      {"openat", 2, true},
      {"openat", 1, false},     {"ptrace", 0, false},
      {"ptrace", 1, true},      {"unshare", 0, false},
      {"arch_prctl", 0, true},  {"mseal", 2, false},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(kCases); i++) {
    int nr = sbx_syscall_number(kCases[i].name);
    ck_assert_msg(sbx_syscall_arg_is_32bit(nr, kCases[i].arg) == kCases[i].is32,
                  "%s arg%u should%s be int-sized", kCases[i].name,
                  kCases[i].arg, kCases[i].is32 ? "" : " not");
  }
  ck_assert(!sbx_syscall_arg_is_32bit(sbx_syscall_number("ioctl"), 6));
}
END_TEST

/* The running kernel reads only the low half of the arguments the table
 * calls int-sized: the same calls with junk above bit 31 behave exactly as
 * without it. */
START_TEST(syscall_int_sized_arguments_are_truncated_by_the_kernel) {
  int pipefd[2];
  ck_assert_int_eq(pipe2(pipefd, O_CLOEXEC), 0);
  ck_assert_int_eq(write(pipefd[1], "abc", 3), 3);

  int avail = -1;
  ck_assert_int_eq(syscall(SYS_ioctl, (uint64_t)pipefd[0] | HIGH_JUNK,
                           (uint64_t)FIONREAD | HIGH_JUNK, &avail),
                   0);
  ck_assert_int_eq(avail, 3);

  ck_assert_int_eq(syscall(SYS_fcntl, (uint64_t)pipefd[0] | HIGH_JUNK,
                           (uint64_t)F_GETFD | HIGH_JUNK, 0),
                   FD_CLOEXEC);

  char buf[3];
  struct iovec iov = {buf, sizeof(buf)};
  ck_assert_int_eq(syscall(SYS_readv, (uint64_t)pipefd[0] | HIGH_JUNK, &iov, 1),
                   3);
  ck_assert_int_eq(memcmp(buf, "abc", 3), 0);

  long s = syscall(SYS_socket, (uint64_t)AF_UNIX | HIGH_JUNK,
                   (uint64_t)SOCK_STREAM | HIGH_JUNK, HIGH_JUNK);
  ck_assert_msg(s >= 0, "socket: %s", strerror(errno));
  close((int)s);

  ck_assert_int_ge(
      syscall(SYS_prctl, (uint64_t)PR_GET_DUMPABLE | HIGH_JUNK, 0, 0, 0, 0), 0);
  ck_assert_int_eq(syscall(SYS_kill, (uint64_t)getpid() | HIGH_JUNK, HIGH_JUNK),
                   0);
  ck_assert_int_eq(syscall(SYS_getrandom, buf, 1, HIGH_JUNK), 1);

  /* clone with SIGCHLD and junk above it is a plain fork. */
  long child = syscall(SYS_clone, (uint64_t)SIGCHLD | HIGH_JUNK, 0, 0, 0, 0);
  if (child == 0)
    _exit(7);
  ck_assert_msg(child > 0, "clone: %s", strerror(errno));
  int status;
  ck_assert_int_eq(waitpid((pid_t)child, &status, 0), child);
  ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 7);

  ck_assert_int_eq(syscall(SYS_close, (uint64_t)pipefd[0] | HIGH_JUNK), 0);
  ck_assert_int_eq(fcntl(pipefd[0], F_GETFD), -1);
  ck_assert_int_eq(errno, EBADF);
  close(pipefd[1]);
}
END_TEST

/* Positive control for the other half of the table: an argument it calls
 * full-width is read in full, so junk changes the outcome. */
START_TEST(syscall_full_width_arguments_are_read_in_full_by_the_kernel) {
  void *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ck_assert_ptr_ne(page, MAP_FAILED);
  ck_assert_int_eq(syscall(SYS_mprotect, page, 4096, PROT_READ), 0);
  errno = 0;
  ck_assert_int_eq(
      syscall(SYS_mprotect, page, 4096, (uint64_t)PROT_READ | HIGH_JUNK), -1);
  ck_assert_int_eq(errno, EINVAL);
  munmap(page, 4096);
  errno = 0;
  ck_assert_int_eq(syscall(SYS_unshare, HIGH_JUNK), -1);
  ck_assert_int_eq(errno, EINVAL);
}
END_TEST

static Suite *syscalls_suite(void) {
  Suite *s = suite_create("policy_syscalls");
  TCase *tc = tcase_create("table");
  tcase_add_test(tc, syscall_names_and_numbers_round_trip);
  tcase_add_test(tc,
                 syscall_table_agrees_with_libseccomp_on_every_name_it_knows);
  tcase_add_test(tc, syscall_table_knows_numbers_newer_than_the_build_headers);
  tcase_add_test(tc, syscall_supplement_number_is_the_one_the_kernel_runs);
  tcase_add_test(tc, syscall_lookups_report_unknown_names_and_numbers);
  tcase_add_test(tc, syscall_argument_counts_follow_the_kernel_signatures);
  tcase_add_test(tc, syscall_int_sized_arguments_follow_the_kernel_signatures);
  tcase_add_test(tc, syscall_int_sized_arguments_are_truncated_by_the_kernel);
  tcase_add_test(tc,
                 syscall_full_width_arguments_are_read_in_full_by_the_kernel);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(syscalls_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
