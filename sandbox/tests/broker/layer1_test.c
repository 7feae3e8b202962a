/* Layer 1 with a real broker: the compiled filter's verdicts, then
 * unmodified libc calls (fopen, stat, dlopen, ...) inside processes that
 * entered layer 1 and Landlock, so that the broker is the only way to a
 * file, in-process and in zygote workers. Every refusal has a control: the
 * same call outside the sandbox, or from the same process before it
 * entered the sandbox, succeeds.
 *
 * Sandboxed code runs in forked children; they report the first failed
 * expectation through a pipe and leave with _exit.
 */
#include <check.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/audit.h>
#include <linux/openat2.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib.h>

#include "sandbox/broker/broker.h"
#include "sandbox/broker/client.h"
#include "sandbox/broker/layer1.h"
#include "sandbox/files/fs_calls.h"
#include "sandbox/kernel/landlock/landlock.h"
#include "sandbox/kernel/seccomp/bpf.h"
#include "sandbox/kernel/seccomp/loader.h"
#include "sandbox/policy/compiler.h"
#include "sandbox/policy/parser.h"
#include "sandbox/kernel/seccomp/trap.h"
#include "sandbox/zygote/zygote.h"
#include "sandbox/policy/builtin/builtin.h"
#include "sandbox/base/syscalls.h"
#include "sandbox/tests/broker/broker_test_util.h"

#define LIBDIR "/usr/lib/x86_64-linux-gnu/"

/* ---- Fixture: a tree, a broker serving it and the loader's files -------- */

typedef struct {
  broker_test_tree t;
  sbx_allowlist *list;
  sbx_broker *b;
  int channel;
} fixture;

static void start(fixture *f) {
  broker_test_tree_make(&f->t);
  f->list = broker_test_tree_allowlist(&f->t, "worker");
  GError *error = NULL;
  const char *system_rules =
      "read " LIBDIR "\nstat-intermediate " LIBDIR "\nread /etc/ld.so.cache\n";
  ck_assert_msg(
      sbx_allowlist_parse(f->list, system_rules, "layer1_test", &error), "%s",
      error ? error->message : "");
  const sbx_allowlist *lists[] = {f->list};
  sbx_broker_config cfg = {
      .allowlists = lists, .n_allowlists = 1, .audit_fd = -1};
  f->b = sbx_broker_start(&cfg, &error);
  ck_assert_msg(f->b != NULL, "%s", error ? error->message : "");
  f->channel = sbx_broker_connect(f->b, "worker", &error);
  ck_assert_msg(f->channel >= 0, "%s", error ? error->message : "");
}

static void stop(fixture *f) {
  if (f->b)
    sbx_broker_stop(f->b, NULL, NULL);
  if (f->channel >= 0)
    close(f->channel);
  sbx_allowlist_free(f->list);
  broker_test_tree_free(&f->t);
}

static uint64_t broker_requests(fixture *f) {
  sbx_broker_stats stats;
  GError *error = NULL;
  ck_assert_msg(sbx_broker_get_stats(f->b, &stats, &error), "%s",
                error ? error->message : "");
  return stats.requests;
}

/* ---- Sandboxed children -------------------------------------------------- */

/* Where a child reports its first failed expectation. */
static int failure_fd = -1;

static int fail_at(int line, const char *fmt, ...) G_GNUC_PRINTF(2, 3);

static int fail_at(int line, const char *fmt, ...) {
  char buf[512];
  int n = snprintf(buf, sizeof buf, "line %d: ", line);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf + n, sizeof buf - (size_t)n, fmt, ap);
  va_end(ap);
  ssize_t ignored = write(failure_fd, buf, strlen(buf));
  (void)ignored;
  return 1;
}

#define EXPECT(cond)                                             \
  do {                                                           \
    if (!(cond))                                                 \
      return fail_at(__LINE__, "%s (errno %d %s)", #cond, errno, \
                     strerror(errno));                           \
  } while (0)

#define EXPECT_ERRNO(call, err)                                                \
  do {                                                                         \
    errno = 0;                                                                 \
    long r_ = (long)(call);                                                    \
    if (r_ != -1 || errno != (err))                                            \
      return fail_at(__LINE__, "%s: got %ld errno %d (%s), want -1 %s", #call, \
                     r_, errno, strerror(errno), #err);                        \
  } while (0)

/* Landlock with every right handled and no rule: the process cannot open
 * anything by itself any more. */
static int enter_landlock(void) {
  sbx_landlock_builder *b = sbx_landlock_builder_new();
  sbx_landlock_report report;
  int fd = sbx_landlock_build(b, &report, NULL);
  sbx_landlock_builder_free(b);
  if (fd < 0)
    return -1;
  int rc = sbx_landlock_restrict_self_raw(fd, report.restrict_flags);
  close(fd);
  return rc;
}

typedef struct {
  fixture *f;
  int (*body)(fixture *f);
  bool landlock;
} child_plan;

static sbx_broker_client child_client;

static int enter_and_run(void *arg) {
  const child_plan *plan = arg;
  sbx_broker_client_init(&child_client, plan->f->channel);
  GError *error = NULL;
  if (!sbx_layer1_enter(&child_client, &error))
    return fail_at(__LINE__, "sbx_layer1_enter: %s", error->message);
  if (plan->landlock && enter_landlock() != 0)
    return fail_at(__LINE__, "Landlock could not be entered");
  return plan->body(plan->f);
}

/* Runs fn(arg) in a forked child while the parent runs meanwhile(arg)
 * (may be NULL); returns the child's status (exit code, or 128+signal).
 * With expect_success, fails the test with the child's first failed
 * expectation unless it returned 0. */
static int run_child(int (*fn)(void *), void *arg, void (*meanwhile)(void *),
                     bool expect_success) {
  int p[2];
  ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    close(p[0]);
    failure_fd = p[1];
    _exit(fn(arg));
  }
  close(p[1]);
  if (meanwhile)
    meanwhile(arg);
  int status;
  pid_t r;
  do {
    r = waitpid(pid, &status, 0);
  } while (r < 0 && errno == EINTR);
  ck_assert_int_eq(r, pid);
  char msg[512] = "";
  ssize_t n = read(p[0], msg, sizeof msg - 1);
  close(p[0]);
  if (n > 0)
    msg[n] = '\0';
  status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  if (expect_success)
    ck_assert_msg(status == 0 && n <= 0, "sandboxed child: status %d: %s",
                  status, msg);
  return status;
}

/* Runs body in a child under layer 1 (and Landlock when asked). */
static int run_sandboxed(fixture *f, int (*body)(fixture *f), bool landlock,
                         bool expect_success) {
  child_plan plan = {.f = f, .body = body, .landlock = landlock};
  return run_child(enter_and_run, &plan, NULL, expect_success);
}

static char *slurp(FILE *fp) {
  static char buf[256];
  size_t n = fread(buf, 1, sizeof buf - 1, fp);
  buf[n] = '\0';
  return buf;
}

/* ---- The compiled program ------------------------------------------------ */

static uint32_t verdict(const sbx_bpf_program *prog, uint32_t arch, int nr) {
  struct seccomp_data d;
  memset(&d, 0, sizeof d);
  d.arch = arch;
  d.nr = nr;
  return sbx_bpf_run(prog->insns, prog->len, &d, NULL);
}

static int nr_of(const char *name) {
  int nr = sbx_syscall_number(name);
  ck_assert_msg(nr >= 0, "unknown syscall %s", name);
  return nr;
}

START_TEST(layer1_traps_file_calls_and_allows_what_its_handler_needs) {
  sbx_bpf_program prog;
  GError *error = NULL;
  ck_assert_msg(sbx_layer1_compile(&prog, &error), "%s",
                error ? error->message : "");
  static const char *trapped[] = {
      "open",       "openat",     "creat",  "stat",      "lstat",
      "newfstatat", "statx",      "access", "faccessat", "faccessat2",
      "readlink",   "readlinkat", "mkdir",  "mkdirat",   "rmdir",
      "unlink",     "unlinkat",   "rename", "renameat",  "renameat2"};
  for (size_t i = 0; i < G_N_ELEMENTS(trapped); i++)
    ck_assert_msg(verdict(&prog, AUDIT_ARCH_X86_64, nr_of(trapped[i])) ==
                      SECCOMP_RET_TRAP,
                  "%s is not trapped", trapped[i]);
  static const char *allowed[] = {"socketpair", "sendmsg", "recvmsg",
                                  "close",      "fstat",   "rt_sigreturn",
                                  "read",       "mmap",    "getpid"};
  for (size_t i = 0; i < G_N_ELEMENTS(allowed); i++)
    ck_assert_msg(verdict(&prog, AUDIT_ARCH_X86_64, nr_of(allowed[i])) ==
                      SECCOMP_RET_ALLOW,
                  "%s is not allowed", allowed[i]);
  ck_assert_uint_eq(verdict(&prog, AUDIT_ARCH_X86_64, nr_of("openat2")),
                    SECCOMP_RET_ERRNO | ENOSYS);
  static const char *refused[] = {"link",     "symlink",   "chmod", "chown",
                                  "truncate", "utimensat", "mknod", "chdir",
                                  "execve",   "statfs"};
  for (size_t i = 0; i < G_N_ELEMENTS(refused); i++)
    ck_assert_msg(verdict(&prog, AUDIT_ARCH_X86_64, nr_of(refused[i])) ==
                      (SECCOMP_RET_ERRNO | EPERM),
                  "%s is not EPERM", refused[i]);
  /* x32 numbers and other architectures die, as under every sbx policy. */
  ck_assert_uint_eq(
      verdict(&prog, AUDIT_ARCH_X86_64, 0x40000000 | nr_of("getpid")),
      SECCOMP_RET_KILL_PROCESS);
  ck_assert_uint_eq(verdict(&prog, AUDIT_ARCH_I386, 20),
                    SECCOMP_RET_KILL_PROCESS);
  sbx_bpf_program_clear(&prog);
}
END_TEST

/* ---- In-process ---------------------------------------------------------- */

typedef unsigned long (*crc32_fn)(unsigned long, const unsigned char *,
                                  unsigned);

static int body_dlopen(fixture *f) {
  (void)f;
  void *h = dlopen("libz.so.1", RTLD_NOW | RTLD_LOCAL);
  if (h == NULL)
    return fail_at(__LINE__, "dlopen: %s", dlerror());
  crc32_fn crc = (crc32_fn)(uintptr_t)dlsym(h, "crc32");
  EXPECT(crc != NULL);
  EXPECT(crc(0, (const unsigned char *)"abc", 3) == 0x352441c2ul);
  return 0;
}

START_TEST(dlopen_of_a_library_goes_through_the_broker_and_runs) {
  fixture f;
  start(&f);
  /* Control: libz is not in this process yet, so dlopen must open it. */
  ck_assert_ptr_null(dlopen("libz.so.1", RTLD_NOW | RTLD_NOLOAD));
  uint64_t before = broker_requests(&f);
  run_sandboxed(&f, body_dlopen, true, true);
  /* The loader's cache and the library itself came from the broker. */
  ck_assert_uint_ge(broker_requests(&f) - before, 2);
  stop(&f);
}
END_TEST

static int body_fopen(fixture *f) {
  /* A served call leaves errno as it was, like a successful system call. */
  errno = 4242;
  int fd = open(f->t.good_file, O_RDONLY | O_CLOEXEC);
  EXPECT(fd >= 0 && errno == 4242);
  struct stat st;
  EXPECT(fstat(fd, &st) == 0 && stat(f->t.good_file, &st) == 0 &&
         errno == 4242);
  close(fd);
  FILE *fp = fopen(f->t.good_file, "r");
  EXPECT(fp != NULL);
  EXPECT(strcmp(slurp(fp), "good") == 0);
  fclose(fp);
  errno = 0;
  EXPECT(fopen(f->t.canary, "r") == NULL && errno == EACCES);
  errno = 0;
  EXPECT(fopen(f->t.sibling, "r") == NULL && errno == EACCES);
  errno = 0;
  EXPECT(fopen(f->t.good_file, "w") == NULL && errno == EACCES);
  EXPECT_ERRNO(open("/etc/passwd", O_RDONLY), EACCES);
  /* Missing files inside the tree are missing, not forbidden. */
  char *missing = broker_test_path(&f->t, "good/missing");
  EXPECT_ERRNO(open(missing, O_RDONLY), ENOENT);
  return 0;
}

START_TEST(fopen_reads_allowed_files_and_gets_eacces_elsewhere) {
  fixture f;
  start(&f);
  /* Controls: without the sandbox every one of these opens. */
  const char *outside[] = {f.t.canary, f.t.sibling, "/etc/passwd"};
  for (size_t i = 0; i < G_N_ELEMENTS(outside); i++) {
    FILE *fp = fopen(outside[i], "r");
    ck_assert_msg(fp != NULL, "control: fopen %s: %s", outside[i],
                  strerror(errno));
    fclose(fp);
  }
  FILE *fp = fopen(f.t.good_file, "r+");
  ck_assert_ptr_nonnull(fp);
  fclose(fp);
  run_sandboxed(&f, body_fopen, true, true);
  stop(&f);
}
END_TEST

/* A filter stacked on layer 1 that refuses recvmsg with MSG_DONTWAIT
 * (EPERM): the client's polls for a reply fail, its blocking receive does
 * not. Compiled before the fork, loaded in the sandboxed child. */
static sbx_bpf_program refuse_polling;

static void compile_refuse_polling(void) {
  GError *error = NULL;
  sbx_policy *pol = sbx_policy_parse_string(
      "@default allow\n"
      "recvmsg: arg2 in ~MSG_DONTWAIT; return EPERM\n",
      "refuse-polling", NULL, &error);
  ck_assert_msg(pol != NULL, "%s", error ? error->message : "");
  ck_assert_msg(sbx_bpf_compile(pol, &refuse_polling, &error), "%s",
                error ? error->message : "");
  sbx_policy_free(pol);
}

/* recvmsg(2) itself (recv is recvfrom). */
static ssize_t poll_once(int fd) {
  char b;
  struct iovec iov = {.iov_base = &b, .iov_len = 1};
  struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
  return recvmsg(fd, &m, MSG_DONTWAIT);
}

static int body_no_polling(fixture *f) {
  int sv[2];
  EXPECT(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0);
  /* Control: before the filter, an empty socket says "nothing yet". */
  EXPECT_ERRNO(poll_once(sv[0]), EAGAIN);
  EXPECT(sbx_seccomp_load_raw(refuse_polling.insns, refuse_polling.len, 0) ==
         0);
  EXPECT_ERRNO(poll_once(sv[0]), EPERM);
  for (int i = 0; i < 300; i++) {
    FILE *fp = fopen(f->t.good_file, "r");
    EXPECT(fp != NULL);
    EXPECT(strcmp(slurp(fp), "good") == 0);
    fclose(fp);
  }
  EXPECT_ERRNO(open(f->t.canary, O_RDONLY), EACCES);
  close(sv[0]);
  close(sv[1]);
  return 0;
}

START_TEST(a_filter_that_refuses_polling_still_gets_every_reply) {
  fixture f;
  start(&f);
  compile_refuse_polling();
  run_sandboxed(&f, body_no_polling, true, true);
  sbx_bpf_program_clear(&refuse_polling);
  stop(&f);
}
END_TEST

static int body_path_calls(fixture *f) {
  struct stat st;
  char *link = broker_test_path(&f->t, "good/link");
  EXPECT(stat(f->t.good_file, &st) == 0 && S_ISREG(st.st_mode) &&
         st.st_size == 4);
  EXPECT(lstat(link, &st) == 0 && S_ISLNK(st.st_mode));
  EXPECT(stat(link, &st) == 0 && S_ISREG(st.st_mode));
  char target[64] = "";
  EXPECT(readlink(link, target, sizeof target) == 4 &&
         memcmp(target, "file", 4) == 0);
  EXPECT(access(f->t.good_file, R_OK) == 0);
  EXPECT_ERRNO(access(f->t.good_file, W_OK), EACCES);
  EXPECT_ERRNO(access(f->t.canary, F_OK), EACCES);
  EXPECT_ERRNO(stat(f->t.canary, &st), EACCES);

  char *dir = broker_test_path(&f->t, "rw/dir");
  char *moved = broker_test_path(&f->t, "rw/moved");
  char *file = broker_test_path(&f->t, "rw/file");
  char *renamed = broker_test_path(&f->t, "rw/renamed");
  EXPECT(mkdir(dir, 0755) == 0);
  EXPECT(stat(dir, &st) == 0 && S_ISDIR(st.st_mode));
  EXPECT(rename(dir, moved) == 0);
  EXPECT(rmdir(moved) == 0);
  EXPECT(mkdirat(AT_FDCWD, dir, 0700) == 0);
  EXPECT(unlinkat(AT_FDCWD, dir, AT_REMOVEDIR) == 0);
  EXPECT_ERRNO(stat(dir, &st), ENOENT);
  FILE *fp = fopen(file, "w");
  EXPECT(fp != NULL);
  EXPECT(fputs("written", fp) >= 0);
  EXPECT(fclose(fp) == 0);
  EXPECT(renameat2(AT_FDCWD, file, AT_FDCWD, renamed, RENAME_NOREPLACE) == 0);
  char *gone = broker_test_path(&f->t, "rw/gone");
  int fd = creat(gone, 0600);
  EXPECT(fd >= 0);
  close(fd);
  EXPECT(unlink(gone) == 0);
  /* Writes stay inside the create tree. */
  char *outside = broker_test_path(&f->t, "good/new");
  EXPECT_ERRNO(mkdir(outside, 0755), EACCES);
  EXPECT_ERRNO(rename(renamed, outside), EACCES);
  EXPECT_ERRNO(unlink(f->t.good_file), EACCES);
  /* The broker does not serve these; layer 1 answers EPERM. */
  EXPECT_ERRNO(symlink("x", file), EPERM);
  EXPECT_ERRNO(chmod(renamed, 0600), EPERM);
  return 0;
}

START_TEST(path_calls_inside_the_tree_are_served_and_writes_stay_in_it) {
  fixture f;
  start(&f);
  char *link = broker_test_path(&f.t, "good/link");
  ck_assert_int_eq(symlink("file", link), 0);
  run_sandboxed(&f, body_path_calls, true, true);
  /* What the child did is on disk. */
  char *renamed = broker_test_path(&f.t, "rw/renamed");
  char *text = NULL;
  ck_assert(g_file_get_contents(renamed, &text, NULL, NULL));
  ck_assert_str_eq(text, "written");
  char *gone = broker_test_path(&f.t, "rw/gone");
  char *outside = broker_test_path(&f.t, "good/new");
  ck_assert_int_ne(access(gone, F_OK), 0);
  ck_assert_int_ne(access(outside, F_OK), 0);
  /* Controls for the refusals: unsandboxed, the same calls work. */
  ck_assert_int_eq(mkdir(outside, 0755), 0);
  ck_assert_int_eq(rmdir(outside), 0);
  char *sym = broker_test_path(&f.t, "rw/sym");
  ck_assert_int_eq(symlink("x", sym), 0);
  ck_assert_int_eq(chmod(renamed, 0600), 0);
  g_free(text);
  g_free(link);
  g_free(renamed);
  g_free(gone);
  g_free(outside);
  g_free(sym);
  stop(&f);
}
END_TEST

/* In rw/: dsub/ (a directory), dlink -> dsub, dfile, dflink -> dfile.
 * A name written as a directory ("dlink/", "dfile/", "dsub/.") follows
 * a final link and must name a directory: each call answers as the
 * kernel does, which the same body shows unsandboxed, and nothing the
 * kernel refuses changes anything. */
static int body_directory_forms(fixture *f) {
  char *p[7];
  static const char *const rel[] = {"rw/dsub",  "rw/dlink",  "rw/dflink",
                                    "rw/dfile", "rw/dsub/.", "rw/dsub/..",
                                    "rw/dnew"};
  for (size_t i = 0; i < G_N_ELEMENTS(rel); i++)
    p[i] = broker_test_path(&f->t, rel[i]);
  char *dsub = g_strconcat(p[0], "/", NULL);
  char *dlink = g_strconcat(p[1], "/", NULL);
  char *dflink = g_strconcat(p[2], "/", NULL);
  char *dfile = g_strconcat(p[3], "/", NULL);
  char *dnew = g_strconcat(p[6], "/", NULL);
  struct stat st;
  char buf[64];
  EXPECT(lstat(dlink, &st) == 0 && S_ISDIR(st.st_mode));
  EXPECT(lstat(p[4], &st) == 0 && S_ISDIR(st.st_mode));
  EXPECT_ERRNO(lstat(dflink, &st), ENOTDIR);
  EXPECT_ERRNO(stat(dfile, &st), ENOTDIR);
  EXPECT_ERRNO(readlink(dlink, buf, sizeof buf), EINVAL);
  EXPECT_ERRNO(readlink(dflink, buf, sizeof buf), ENOTDIR);
  EXPECT_ERRNO(access(dflink, F_OK), ENOTDIR);
  int fd = open(dlink, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  EXPECT(fd >= 0);
  close(fd);
  EXPECT_ERRNO(open(dflink, O_RDONLY | O_CLOEXEC), ENOTDIR);
  EXPECT_ERRNO(open(dnew, O_WRONLY | O_CREAT | O_CLOEXEC, 0600), EISDIR);
  EXPECT_ERRNO(open(dfile, O_WRONLY | O_CREAT | O_CLOEXEC, 0600), EISDIR);
  EXPECT_ERRNO(unlink(dfile), ENOTDIR);
  EXPECT_ERRNO(unlink(dlink), ENOTDIR);
  EXPECT_ERRNO(unlink(dsub), EISDIR);
  EXPECT_ERRNO(unlink(p[4]), EISDIR);
  EXPECT_ERRNO(rmdir(dlink), ENOTDIR);
  EXPECT_ERRNO(rmdir(p[4]), EINVAL);
  EXPECT_ERRNO(rmdir(p[5]), ENOTEMPTY);
  EXPECT_ERRNO(rename(dfile, p[6]), ENOTDIR);
  EXPECT_ERRNO(rename(p[4], p[6]), EBUSY);
  /* Nothing changed. */
  EXPECT(lstat(p[3], &st) == 0 && S_ISREG(st.st_mode));
  EXPECT(lstat(p[1], &st) == 0 && S_ISLNK(st.st_mode));
  EXPECT(lstat(p[0], &st) == 0 && S_ISDIR(st.st_mode));
  EXPECT_ERRNO(lstat(p[6], &st), ENOENT);
  for (size_t i = 0; i < G_N_ELEMENTS(rel); i++)
    g_free(p[i]);
  g_free(dlink);
  g_free(dflink);
  g_free(dfile);
  g_free(dnew);
  g_free(dsub);
  return 0;
}

static int run_directory_forms(void *arg) {
  return body_directory_forms(arg);
}

START_TEST(a_name_written_as_a_directory_is_answered_as_the_kernel_does) {
  fixture f;
  start(&f);
  char *sub = broker_test_path(&f.t, "rw/dsub");
  char *link = broker_test_path(&f.t, "rw/dlink");
  char *file = broker_test_path(&f.t, "rw/dfile");
  char *flink = broker_test_path(&f.t, "rw/dflink");
  ck_assert_int_eq(mkdir(sub, 0755), 0);
  ck_assert_int_eq(symlink("dsub", link), 0);
  broker_test_write(file, "f");
  ck_assert_int_eq(symlink("dfile", flink), 0);
  /* Control: the kernel's answers, outside the sandbox. */
  run_child(run_directory_forms, &f, NULL, true);
  run_sandboxed(&f, body_directory_forms, true, true);
  g_free(sub);
  g_free(link);
  g_free(file);
  g_free(flink);
  stop(&f);
}
END_TEST

static int body_descriptor_calls(fixture *f) {
  int fd = open(f->t.good_file, O_RDONLY | O_CLOEXEC);
  EXPECT(fd >= 0);
  struct stat st;
  /* glibc's fstat is newfstatat(fd, "", AT_EMPTY_PATH). */
  EXPECT(fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 4);
  EXPECT(syscall(SYS_newfstatat, fd, "", &st, AT_EMPTY_PATH) == 0 &&
         st.st_size == 4);
  struct statx stx;
  memset(&stx, 0, sizeof stx);
  EXPECT(statx(fd, "", AT_EMPTY_PATH, STATX_SIZE, &stx) == 0 &&
         (stx.stx_mask & STATX_SIZE) && stx.stx_size == 4 &&
         S_ISREG(stx.stx_mode));
  memset(&stx, 0, sizeof stx);
  EXPECT(statx(AT_FDCWD, f->t.good_file, 0, STATX_SIZE, &stx) == 0 &&
         stx.stx_size == 4);
  int p[2];
  EXPECT(pipe(p) == 0);
  EXPECT(fstat(p[0], &st) == 0 && S_ISFIFO(st.st_mode));
  close(p[0]);
  close(p[1]);
  EXPECT_ERRNO(fstat(1000, &st), EBADF);
  /* The working directory is not served; nor are relative paths, with
   * AT_FDCWD or a directory descriptor. */
  EXPECT_ERRNO(syscall(SYS_newfstatat, AT_FDCWD, "", &st, AT_EMPTY_PATH),
               EACCES);
  EXPECT_ERRNO(open("file", O_RDONLY), EACCES);
  int dir = open(f->t.good, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  EXPECT(dir >= 0);
  EXPECT_ERRNO(openat(dir, "file", O_RDONLY), EACCES);
  /* An absolute path ignores the directory descriptor. */
  int again = openat(dir, f->t.good_file, O_RDONLY | O_CLOEXEC);
  EXPECT(again >= 0);
  close(again);
  close(dir);
  EXPECT_ERRNO(open("", O_RDONLY), ENOENT);
  EXPECT_ERRNO(syscall(SYS_open, NULL, O_RDONLY), EFAULT);
  static char too_long[PATH_MAX + 1];
  memset(too_long, 'a', PATH_MAX);
  too_long[0] = '/';
  EXPECT_ERRNO(open(too_long, O_RDONLY), ENAMETOOLONG);
  EXPECT_ERRNO(syscall(SYS_newfstatat, fd, "", &st, 0x40000000), EINVAL);
  close(fd);
  /* Spellings the broker refuses are normalised first. */
  char *odd = g_strdup_printf("/%s/./sub//../file", f->t.good);
  FILE *fp = fopen(odd, "r");
  EXPECT(fp != NULL);
  EXPECT(strcmp(slurp(fp), "good") == 0);
  fclose(fp);
  return 0;
}

START_TEST(fstat_is_served_locally_and_relative_paths_get_eacces) {
  fixture f;
  start(&f);
  /* Controls: unsandboxed, the relative forms open the same file. */
  ck_assert_int_eq(chdir(f.t.good), 0);
  int fd = open("file", O_RDONLY | O_CLOEXEC);
  ck_assert_int_ge(fd, 0);
  close(fd);
  int dir = open(f.t.good, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  fd = openat(dir, "file", O_RDONLY | O_CLOEXEC);
  ck_assert_int_ge(fd, 0);
  close(fd);
  close(dir);
  run_sandboxed(&f, body_descriptor_calls, true, true);
  ck_assert_int_eq(chdir("/"), 0);
  stop(&f);
}
END_TEST

/* Malformed arguments on every call layer 1 traps: the answer under
 * layer 1 (the shared decoder's) is the kernel's own, taken by this
 * process before the child enters the sandbox. */
typedef struct {
  int nr;
  const char *name;
  const char *what;
  uint64_t a[6];
  long want; /* the kernel's: 0 or -errno */
} malformed_call;

static malformed_call malformed[160];
static size_t n_malformed;
static char malformed_buf[8192];
static char malformed_long[PATH_MAX + 16];

static void add_malformed(const sbx_fs_call *c, const char *what,
                          const char *path, sbx_fs_arg_role role,
                          uint64_t value) {
  ck_assert_uint_lt(n_malformed, G_N_ELEMENTS(malformed));
  malformed_call *m = &malformed[n_malformed++];
  m->nr = c->nr;
  m->name = c->name;
  m->what = what;
  for (int i = 0; i < 6; i++) {
    uint64_t v = 0;
    switch ((sbx_fs_arg_role)c->args[i]) {
      case SBX_FS_ARG_DIRFD:
      case SBX_FS_ARG_DIRFD2:
        v = (uint64_t)(int64_t)AT_FDCWD;
        break;
      case SBX_FS_ARG_PATH:
        v = (uintptr_t)path;
        break;
      case SBX_FS_ARG_PATH2:
        v = (uintptr_t) "/nonexistent-sbx-layer1/b";
        break;
      case SBX_FS_ARG_MODE:
        v = 0600;
        break;
      case SBX_FS_ARG_MASK:
        v = STATX_BASIC_STATS;
        break;
      case SBX_FS_ARG_BUF:
        v = (uintptr_t)malformed_buf;
        break;
      case SBX_FS_ARG_SIZE:
        v = 64;
        break;
      default:
        break;
    }
    m->a[i] = v;
  }
  if (role != SBX_FS_ARG_NONE)
    m->a[sbx_fs_call_arg(c, role)] = value;
  long rc =
      syscall(m->nr, m->a[0], m->a[1], m->a[2], m->a[3], m->a[4], m->a[5]);
  m->want = rc < 0 ? -errno : rc;
  ck_assert_msg(m->want < 0, "%s %s: the kernel accepted it", c->name, what);
}

static void collect_malformed(void) {
  memset(malformed_long, 'a', sizeof(malformed_long) - 1);
  malformed_long[0] = '/';
  n_malformed = 0;
  const char *missing = "/nonexistent-sbx-layer1/a";
  for (size_t i = 0; i < sbx_fs_call_count(); i++) {
    const sbx_fs_call *c = sbx_fs_call_at(i);
    if (!(c->traits & SBX_FS_LAYER1))
      continue;
    add_malformed(c, "NULL path", NULL, SBX_FS_ARG_NONE, 0);
    add_malformed(c, "empty path", "", SBX_FS_ARG_NONE, 0);
    add_malformed(c, "long path", malformed_long, SBX_FS_ARG_NONE, 0);
    if (sbx_fs_call_arg(c, SBX_FS_ARG_AT_FLAGS) >= 0)
      add_malformed(c, "unknown AT_ flag", missing, SBX_FS_ARG_AT_FLAGS,
                    0x40000000);
    if (c->traits & SBX_FS_STRICT_FLAGS)
      add_malformed(c, "unknown flag", missing, SBX_FS_ARG_FLAGS, 0x40000000);
  }
}

static int body_malformed(fixture *f) {
  (void)f;
  for (size_t i = 0; i < n_malformed; i++) {
    const malformed_call *m = &malformed[i];
    long rc =
        syscall(m->nr, m->a[0], m->a[1], m->a[2], m->a[3], m->a[4], m->a[5]);
    long got = rc < 0 ? -errno : rc;
    if (got != m->want)
      return fail_at(__LINE__, "%s with %s: %ld under layer 1, %ld unsandboxed",
                     m->name, m->what, got, m->want);
  }
  /* The descriptor forms the broker cannot serve: which file a
   * descriptor names is not the broker's to know. */
  int fd = open(f->t.good_file, O_RDONLY | O_CLOEXEC);
  EXPECT(fd >= 0);
  EXPECT_ERRNO(syscall(SYS_faccessat2, fd, "", R_OK, AT_EMPTY_PATH), EACCES);
  close(fd);
  return 0;
}

START_TEST(malformed_arguments_get_the_kernels_errno_from_every_trapped_call) {
  fixture f;
  start(&f);
  collect_malformed();
  /* NULL, "" and a long path for each of the 20 calls, and flags. */
  ck_assert_uint_ge(n_malformed, 60 + 8);
  uint64_t before = broker_requests(&f);
  run_sandboxed(&f, body_malformed, true, true);
  /* Refused in the handler: only the open of the descriptor reached the
   * broker. */
  ck_assert_uint_eq(broker_requests(&f), before + 1);
  stop(&f);
}
END_TEST

static long try_openat2(const char *path) {
  struct open_how how;
  memset(&how, 0, sizeof how);
  how.flags = O_RDONLY | O_CLOEXEC;
  return syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how);
}

static int body_openat2(fixture *f) {
  EXPECT_ERRNO(try_openat2(f->t.good_file), ENOSYS);
  return 0;
}

START_TEST(openat2_gets_enosys_so_libc_falls_back) {
  fixture f;
  start(&f);
  long fd = try_openat2(f.t.good_file); /* control: the kernel has it */
  ck_assert_int_ge(fd, 0);
  close((int)fd);
  run_sandboxed(&f, body_openat2, true, true);
  stop(&f);
}
END_TEST

/* A thread that exists before layer 1 is entered, and opens on request. */
typedef struct {
  const char *path;
  int go[2];
  int done[2];
  int result; /* fd, or -errno */
} opener;

static void *opener_main(void *arg) {
  opener *o = arg;
  char c;
  while (read(o->go[0], &c, 1) == 1) {
    int fd = open(o->path, O_RDONLY | O_CLOEXEC);
    o->result = fd >= 0 ? fd : -errno;
    if (write(o->done[1], "x", 1) != 1)
      break;
  }
  return NULL;
}

static int ask(opener *o) {
  char c;
  if (write(o->go[1], "x", 1) != 1 || read(o->done[0], &c, 1) != 1)
    return -EIO;
  return o->result;
}

static int body_none(fixture *f) {
  (void)f;
  return 0;
}

static int thread_before_entry(void *arg) {
  fixture *f = arg;
  opener o = {.path = f->t.canary};
  if (pipe(o.go) || pipe(o.done))
    return fail_at(__LINE__, "pipe");
  pthread_t t;
  if (pthread_create(&t, NULL, opener_main, &o))
    return fail_at(__LINE__, "pthread_create");
  /* Control: before layer 1 the thread opens the canary itself. */
  int fd = ask(&o);
  EXPECT(fd >= 0);
  close(fd);
  child_plan plan = {.f = f, .body = body_none, .landlock = false};
  if (enter_and_run(&plan) != 0)
    return 1;
  /* The thread has no Landlock domain: only the broker can refuse it. */
  EXPECT(ask(&o) == -EACCES);
  o.path = f->t.good_file;
  fd = ask(&o);
  EXPECT(fd >= 0);
  close(fd);
  return 0;
}

START_TEST(a_thread_started_before_entry_is_brokered_too) {
  fixture f;
  start(&f);
  run_child(thread_before_entry, &f, NULL, true);
  stop(&f);
}
END_TEST

#define N_THREADS 4
#define N_OPENS 1000

typedef struct {
  const char *path;
  char expect[24];
  int mixed;
  int failed;
} reader;

static void *reader_main(void *arg) {
  reader *r = arg;
  for (int i = 0; i < N_OPENS; i++) {
    FILE *fp = fopen(r->path, "r");
    if (!fp) {
      r->failed++;
      continue;
    }
    char buf[16] = "";
    size_t n = fread(buf, 1, sizeof buf - 1, fp);
    buf[n] = '\0';
    if (strcmp(buf, r->expect) != 0)
      r->mixed++;
    fclose(fp);
  }
  return NULL;
}

static char *thread_files[N_THREADS];

static int body_threads(fixture *f) {
  (void)f;
  reader r[N_THREADS];
  pthread_t t[N_THREADS];
  int fd_before = dup(0);
  close(fd_before);
  for (int i = 0; i < N_THREADS; i++) {
    r[i] = (reader){.path = thread_files[i]};
    snprintf(r[i].expect, sizeof r[i].expect, "thread-%d", i);
    EXPECT(pthread_create(&t[i], NULL, reader_main, &r[i]) == 0);
  }
  for (int i = 0; i < N_THREADS; i++) {
    pthread_join(t[i], NULL);
    EXPECT(r[i].failed == 0);
    EXPECT(r[i].mixed == 0);
  }
  /* Every descriptor the broker sent was closed again. */
  int fd_after = dup(0);
  close(fd_after);
  EXPECT(fd_after == fd_before);
  return 0;
}

/* good/thread-N holds "thread-N". */
static void make_thread_files(fixture *f) {
  for (int i = 0; i < N_THREADS; i++) {
    char *rel = g_strdup_printf("good/thread-%d", i);
    thread_files[i] = broker_test_path(&f->t, rel);
    char *text = g_strdup_printf("thread-%d", i);
    broker_test_write(thread_files[i], text);
    g_free(rel);
    g_free(text);
  }
}

static void free_thread_files(void) {
  for (int i = 0; i < N_THREADS; i++)
    g_free(thread_files[i]);
}

START_TEST(four_threads_opening_at_once_each_get_their_own_file) {
  fixture f;
  start(&f);
  make_thread_files(&f);
  uint64_t before = broker_requests(&f);
  run_sandboxed(&f, body_threads, true, true);
  ck_assert_uint_ge(broker_requests(&f) - before, N_THREADS * N_OPENS);
  free_thread_files();
  stop(&f);
}
END_TEST

/* A signal handler that opens a file of its own, arriving while the
 * interrupted code is itself inside a trapped call: the nested request
 * must get its own reply. */
static const char *alarm_path;
static volatile sig_atomic_t alarm_runs, alarm_mixed;

static void on_alarm(int sig) {
  (void)sig;
  int saved = errno;
  int fd = open(alarm_path, O_RDONLY | O_CLOEXEC);
  char buf[16] = "";
  if (fd < 0 || read(fd, buf, sizeof buf - 1) != 8 ||
      memcmp(buf, "thread-1", 8) != 0)
    alarm_mixed++;
  if (fd >= 0)
    close(fd);
  alarm_runs++;
  errno = saved;
}

static int body_signal_during_trap(fixture *f) {
  (void)f;
  alarm_path = thread_files[1];
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_alarm;
  sa.sa_flags = SA_RESTART;
  EXPECT(sigaction(SIGALRM, &sa, NULL) == 0);
  struct itimerval every = {{0, 200}, {0, 200}};
  EXPECT(setitimer(ITIMER_REAL, &every, NULL) == 0);
  reader r = {.path = thread_files[0], .expect = "thread-0"};
  /* At least N_OPENS opens, and on until the handler has run often. */
  for (int round = 0; round < 50 && (round == 0 || alarm_runs < 100); round++)
    reader_main(&r);
  struct itimerval off;
  memset(&off, 0, sizeof off);
  EXPECT(setitimer(ITIMER_REAL, &off, NULL) == 0);
  EXPECT(r.failed == 0);
  EXPECT(r.mixed == 0);
  EXPECT(alarm_runs > 0);
  EXPECT(alarm_mixed == 0);
  return 0;
}

START_TEST(a_signal_handler_opening_during_a_trapped_call_gets_its_own_reply) {
  fixture f;
  start(&f);
  make_thread_files(&f);
  run_sandboxed(&f, body_signal_during_trap, true, true);
  free_thread_files();
  stop(&f);
}
END_TEST

static int body_blocked_sigsys(fixture *f) {
  int fd = open(f->t.good_file, O_RDONLY | O_CLOEXEC);
  EXPECT(fd >= 0); /* control: with SIGSYS deliverable the call works */
  close(fd);
  /* A forged SIGSYS is ignored. */
  EXPECT(raise(SIGSYS) == 0);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGSYS);
  sigprocmask(SIG_BLOCK, &set, NULL);
  fd = open(f->t.good_file, O_RDONLY | O_CLOEXEC);
  return fail_at(__LINE__, "open with SIGSYS blocked returned %d", fd);
}

START_TEST(blocking_sigsys_while_a_call_traps_kills_the_process) {
  fixture f;
  start(&f);
  int status = run_sandboxed(&f, body_blocked_sigsys, true, false);
  ck_assert_int_eq(status, 128 + SIGSYS);
  stop(&f);
}
END_TEST

/* Killed broker (F1): the child says when its control open is done, then
 * waits until the broker is gone. */
static int killed_go[2];
static int killed_ready[2];

static int body_killed_broker(fixture *f) {
  int fd = open(f->t.good_file, O_RDONLY | O_CLOEXEC);
  EXPECT(fd >= 0); /* control: the broker answers while it lives */
  close(fd);
  EXPECT(write(killed_ready[1], "r", 1) == 1);
  char c;
  EXPECT(read(killed_go[0], &c, 1) == 1);
  EXPECT_ERRNO(open(f->t.good_file, O_RDONLY | O_CLOEXEC), EACCES);
  struct stat st;
  EXPECT_ERRNO(stat(f->t.good_file, &st), EACCES);
  errno = 0;
  EXPECT(fopen(f->t.good_file, "r") == NULL && errno == EACCES);
  return 0;
}

static int killed_child(void *arg) {
  child_plan plan = {.f = arg, .body = body_killed_broker, .landlock = true};
  close(killed_go[1]);
  close(killed_ready[0]);
  return enter_and_run(&plan);
}

static void kill_broker_when_ready(void *arg) {
  fixture *f = arg;
  close(killed_go[0]);
  close(killed_ready[1]);
  char ready;
  ssize_t n = read(killed_ready[0], &ready, 1);
  close(killed_ready[0]);
  if (n == 1) { /* otherwise the child failed; run_child reports why */
    ck_assert_int_eq(kill(sbx_broker_pid(f->b), SIGKILL), 0);
    int status = 0;
    ck_assert(sbx_broker_stop(f->b, &status, NULL));
    f->b = NULL;
    ck_assert(WIFSIGNALED(status));
    ck_assert_int_eq(write(killed_go[1], "x", 1), 1);
  }
  close(killed_go[1]);
}

START_TEST(a_killed_broker_gives_eacces_from_the_trapped_call) {
  fixture f;
  start(&f);
  ck_assert_int_eq(pipe(killed_go), 0);
  ck_assert_int_eq(pipe(killed_ready), 0);
  run_child(killed_child, &f, kill_broker_when_ready, true);
  stop(&f);
}
END_TEST

/* ---- In a zygote worker ---------------------------------------------------
 */

/* The zygote's copy of this is what its workers use. */
static sbx_broker_client zygote_client;

typedef struct {
  char allowed[256];
  char forbidden[256];
} worker_paths;

static int worker_entry(const sbx_zygote_worker *args) {
  worker_paths paths;
  memcpy(&paths, args->payload, sizeof paths);
  long out[5] = {0, 0, 0, 0, 0};
  int fd = open(paths.allowed, O_RDONLY);
  if (fd >= 0) {
    char buf[8] = "";
    out[0] = read(fd, buf, sizeof buf - 1) == 4 && memcmp(buf, "good", 4) == 0;
    close(fd);
  } else {
    out[1] = errno;
  }
  errno = 0;
  out[2] = open(paths.forbidden, O_RDONLY);
  out[3] = errno;
  /* The loader, too, reaches libraries only through the broker. */
  void *h = dlopen("libz.so.1", RTLD_NOW | RTLD_LOCAL);
  crc32_fn crc = h ? (crc32_fn)(uintptr_t)dlsym(h, "crc32") : NULL;
  out[4] = crc && crc(0, (const unsigned char *)"abc", 3) == 0x352441c2ul;
  return write(3, out, sizeof out) == sizeof out ? 0 : 91;
}

/* Spawns one worker of `type` on a new broker channel; returns what it
 * wrote (allowed read ok, its errno, forbidden open's result and errno,
 * dlopen ok) after checking that it exited normally. */
static void run_worker(fixture *f, sbx_zygote *z, const char *type,
                       long got[5]) {
  GError *error = NULL;
  int channel = sbx_broker_connect(f->b, "worker", &error);
  ck_assert_msg(channel >= 0, "%s", error ? error->message : "");
  worker_paths paths;
  memset(&paths, 0, sizeof paths);
  g_strlcpy(paths.allowed, f->t.good_file, sizeof paths.allowed);
  g_strlcpy(paths.forbidden, f->t.canary, sizeof paths.forbidden);
  int out[2];
  ck_assert_int_eq(pipe(out), 0);
  int fds[] = {0, 1, 2, out[1]};
  sbx_zygote_spawn_request req = {.process_type = type,
                                  .payload = &paths,
                                  .payload_len = sizeof paths,
                                  .fds = fds,
                                  .n_fds = 4,
                                  .broker_channel = channel};
  pid_t pid;
  ck_assert_msg(sbx_zygote_spawn(z, &req, &pid, &error), "%s",
                error ? error->message : "");
  close(out[1]);
  close(channel);
  ssize_t n = read(out[0], got, 5 * sizeof(long));
  close(out[0]);
  sbx_zygote_exit exit_info;
  ck_assert_msg(sbx_zygote_wait(z, pid, 20000, &exit_info, &error), "%s",
                error ? error->message : "");
  ck_assert_msg(n == (ssize_t)(5 * sizeof(long)), "%s: worker ended early: %s",
                type, exit_info.detail);
  ck_assert_int_eq(exit_info.reason, SBX_ZYGOTE_EXIT_NORMAL);
  ck_assert_int_eq(exit_info.exit_code, 0);
}

START_TEST(a_zygote_worker_opens_allowed_files_and_libraries_with_plain_calls) {
  fixture f;
  start(&f);
  sbx_bpf_program layer1, renderer_prog;
  GError *error = NULL;
  ck_assert_msg(sbx_layer1_compile(&layer1, &error), "%s",
                error ? error->message : "");
  sbx_policy *renderer = sbx_builtin_policy("renderer", &error);
  ck_assert_msg(renderer != NULL, "%s", error ? error->message : "");
  ck_assert_msg(sbx_bpf_compile(renderer, &renderer_prog, &error), "%s",
                error ? error->message : "");
  sbx_policy_free(renderer);
  /* Layer 1 and the renderer policy agree on every file call, so the
   * stacking order changes nothing: both orders are run. */
  sbx_bpf_program in_order[] = {layer1, renderer_prog};
  sbx_bpf_program reversed[] = {renderer_prog, layer1};
  static const char *names[] = {SBX_LAYER1_NAME, "renderer.policy"};
  static const char *reversed_names[] = {"renderer.policy", SBX_LAYER1_NAME};
  sbx_zygote_type types[] = {
      {.name = "renderer",
       .entry = worker_entry,
       .layers = in_order,
       .layer_names = names,
       .n_layers = 2,
       .uses_broker = true,
       .landlock = true},
      {.name = "reversed",
       .entry = worker_entry,
       .layers = reversed,
       .layer_names = reversed_names,
       .n_layers = 2,
       .uses_broker = true,
       .landlock = true},
  };
  sbx_zygote_config config = {
      .types = types,
      .n_types = G_N_ELEMENTS(types),
      .register_broker_traps_raw = sbx_layer1_register_traps_raw,
      .broker_attach_raw = sbx_layer1_attach_raw,
      .broker_client = &zygote_client,
  };
  sbx_zygote *z = NULL;
  ck_assert_msg(sbx_zygote_start(&config, &z, &error), "%s",
                error ? error->message : "");

  /* Control: the forbidden file is readable outside the sandbox. */
  int direct = open(f.t.canary, O_RDONLY | O_CLOEXEC);
  ck_assert_int_ge(direct, 0);
  close(direct);

  for (size_t i = 0; i < G_N_ELEMENTS(types); i++) {
    long got[5];
    run_worker(&f, z, types[i].name, got);
    ck_assert_msg(got[0] == 1, "%s: allowed open failed: errno %ld",
                  types[i].name, got[1]);
    ck_assert_int_eq(got[2], -1);
    ck_assert_int_eq(got[3], EACCES);
    ck_assert_msg(got[4] == 1, "%s: dlopen of libz failed", types[i].name);
  }
  sbx_zygote_stop(z);
  sbx_bpf_program_clear(&layer1);
  sbx_bpf_program_clear(&renderer_prog);
  stop(&f);
}
END_TEST

/* ---- Refusals of the entry points ---------------------------------------- */

static int frozen_registry(void *arg) {
  fixture *f = arg;
  if (!sbx_trap_install(NULL))
    return fail_at(__LINE__, "sbx_trap_install failed");
  sbx_broker_client_init(&child_client, f->channel);
  GError *error = NULL;
  EXPECT(!sbx_layer1_enter(&child_client, &error));
  EXPECT(g_error_matches(error, SBX_LAYER1_ERROR, SBX_LAYER1_ERROR_TRAPS));
  EXPECT(strstr(error->message, "frozen") != NULL);
  g_error_free(error);
  /* Nothing was loaded: the process still opens files by itself. */
  int fd = open(f->t.canary, O_RDONLY | O_CLOEXEC);
  EXPECT(fd >= 0);
  close(fd);
  return 0;
}

START_TEST(entering_after_the_trap_registry_froze_fails_and_loads_nothing) {
  fixture f;
  start(&f);
  /* Control: with a fresh registry the same entry succeeds. */
  run_sandboxed(&f, body_none, false, true);
  run_child(frozen_registry, &f, NULL, true);
  stop(&f);
}
END_TEST

START_TEST(the_zygote_hooks_refuse_a_missing_client_or_channel) {
  sbx_broker_client c;
  ck_assert_int_eq(sbx_layer1_attach_raw(NULL, 3), -EINVAL);
  ck_assert_int_eq(sbx_layer1_attach_raw(&c, -1), -EINVAL);
  ck_assert_int_eq(sbx_layer1_register_traps_raw(NULL, NULL, 0), -EINVAL);
  ck_assert_int_eq(sbx_layer1_attach_raw(&c, 7), 0); /* control */
  ck_assert_int_eq(c.channel, 7);
}
END_TEST

int main(void) {
  umask(022);
  Suite *s = suite_create("layer1");
  TCase *tc = tcase_create("layer1");
  tcase_set_timeout(tc, 30);
  tcase_add_test(tc, layer1_traps_file_calls_and_allows_what_its_handler_needs);
  tcase_add_test(tc, dlopen_of_a_library_goes_through_the_broker_and_runs);
  tcase_add_test(tc, fopen_reads_allowed_files_and_gets_eacces_elsewhere);
  tcase_add_test(tc, a_filter_that_refuses_polling_still_gets_every_reply);
  tcase_add_test(tc,
                 path_calls_inside_the_tree_are_served_and_writes_stay_in_it);
  tcase_add_test(tc,
                 a_name_written_as_a_directory_is_answered_as_the_kernel_does);
  tcase_add_test(tc, fstat_is_served_locally_and_relative_paths_get_eacces);
  tcase_add_test(
      tc, malformed_arguments_get_the_kernels_errno_from_every_trapped_call);
  tcase_add_test(tc, openat2_gets_enosys_so_libc_falls_back);
  tcase_add_test(tc, a_thread_started_before_entry_is_brokered_too);
  tcase_add_test(tc, four_threads_opening_at_once_each_get_their_own_file);
  tcase_add_test(
      tc, a_signal_handler_opening_during_a_trapped_call_gets_its_own_reply);
  tcase_add_test(tc, blocking_sigsys_while_a_call_traps_kills_the_process);
  tcase_add_test(tc, a_killed_broker_gives_eacces_from_the_trapped_call);
  tcase_add_test(
      tc, a_zygote_worker_opens_allowed_files_and_libraries_with_plain_calls);
  tcase_add_test(
      tc, entering_after_the_trap_registry_froze_fails_and_loads_nothing);
  tcase_add_test(tc, the_zygote_hooks_refuse_a_missing_client_or_channel);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
