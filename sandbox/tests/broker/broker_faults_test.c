/* The broker process under its own sandbox and under pressure: its seccomp
 * policy is loaded after Landlock and every command still works (with the
 * audit log on, whatever kind of file the log is); hostile numeric fields
 * (B5); descriptor exhaustion (F4); floods and clients that never read
 * (B7); magic links and /proc/self under a /proc rule (S26); a broker
 * that stops answering its control channel. Each refusal has its positive
 * control. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <linux/landlock.h>
#include <linux/openat2.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <glib.h>

#include "sandbox/broker/broker.h"
#include "sandbox/broker/broker_sandbox.h"
#include "sandbox/broker/client.h"
#include "sandbox/broker/protocol.h"
#include "sandbox/tests/broker/broker_test_util.h"

typedef struct {
  broker_test_tree t;
  sbx_allowlist *list;
  sbx_broker *b;
  int audit_fd;
  char *audit_path;
} fixture;

static void start_with(fixture *f, sbx_broker_config *cfg) {
  const sbx_allowlist *lists[] = {f->list};
  cfg->allowlists = lists;
  cfg->n_allowlists = 1;
  GError *error = NULL;
  f->b = sbx_broker_start(cfg, &error);
  ck_assert_msg(f->b != NULL, "%s", error ? error->message : "");
}

static void stop(fixture *f) {
  if (f->b)
    ck_assert(sbx_broker_stop(f->b, NULL, NULL));
  f->b = NULL;
  sbx_allowlist_free(f->list);
  if (f->audit_fd >= 0)
    close(f->audit_fd);
  if (f->audit_path)
    unlink(f->audit_path);
  g_free(f->audit_path);
  broker_test_tree_free(&f->t);
}

static void start(fixture *f) {
  memset(f, 0, sizeof(*f));
  broker_test_tree_make(&f->t);
  f->list = broker_test_tree_allowlist(&f->t, "worker");
  f->audit_fd = -1;
  sbx_broker_config cfg = {.audit_fd = -1};
  start_with(f, &cfg);
}

static int connect_worker(fixture *f) {
  GError *error = NULL;
  int fd = sbx_broker_connect(f->b, "worker", &error);
  ck_assert_msg(fd >= 0, "%s", error ? error->message : "");
  return fd;
}

/* The value of a "Name:\tvalue" line of /proc/<pid>/status, or -1. */
static long status_field(pid_t pid, const char *name) {
  char *path = g_strdup_printf("/proc/%d/status", (int)pid);
  char *text = NULL;
  ck_assert_msg(g_file_get_contents(path, &text, NULL, NULL), "read %s", path);
  g_free(path);
  long value = -1;
  char *key = g_strconcat("\n", name, ":", NULL);
  char *at = strstr(text, key);
  if (at)
    value = strtol(at + strlen(key), NULL, 10);
  g_free(key);
  g_free(text);
  return value;
}

static gint64 now_ms(void) {
  return g_get_monotonic_time() / 1000;
}

/* ---- the broker's own sandbox ------------------------------------------ */

START_TEST(broker_runs_under_its_own_seccomp_filter) {
  /* Control: the test process itself has no filter, and a broker started
   * dangerously unsandboxed has none either. */
  ck_assert_int_eq(status_field(getpid(), "Seccomp"), 0);
  fixture f;
  memset(&f, 0, sizeof(f));
  broker_test_tree_make(&f.t);
  f.list = broker_test_tree_allowlist(&f.t, "worker");
  f.audit_fd = -1;
  sbx_broker_config bare = {.audit_fd = -1, .dangerously_unsandboxed = true};
  start_with(&f, &bare);
  ck_assert_int_eq(status_field(sbx_broker_pid(f.b), "Seccomp"), 0);
  ck_assert(sbx_broker_stop(f.b, NULL, NULL));

  sbx_broker_config cfg = {.audit_fd = -1};
  start_with(&f, &cfg);
  pid_t pid = sbx_broker_pid(f.b);
  ck_assert_int_eq(status_field(pid, "Seccomp"), 2); /* filter mode */
  ck_assert_int_eq(status_field(pid, "Seccomp_filters"), 1);
  ck_assert_int_eq(status_field(pid, "NoNewPrivs"), 1);
  /* And it serves under it. */
  sbx_broker_client c;
  sbx_broker_client_init(&c, connect_worker(&f));
  int fd = sbx_broker_open(&c, f.t.good_file, O_RDONLY | O_CLOEXEC, 0);
  ck_assert_int_ge(fd, 0);
  close(fd);
  close(c.channel);
  stop(&f);
}
END_TEST

typedef struct {
  broker_test_tree *t;
  sbx_allowlist *list;
  sbx_bpf_program *program;
} sandbox_args;

/* openat2, the one open call broker.policy allows. */
static int open2(const char *path) {
  struct open_how how = {.flags = O_RDONLY | O_CLOEXEC};
  return (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));
}

/* In a forked child: confine it exactly as the broker confines itself. */
static int sandboxed_child(void *arg) {
  sandbox_args *a = arg;
  int canary = open2(a->t->canary);
  if (canary < 0)
    return 10; /* control: readable before */
  close(canary);
  const sbx_allowlist *lists[] = {a->list};
  if (!sbx_broker_sandbox_self(lists, 1, a->program, 0, getppid(), NULL))
    return 11;
  /* Landlock is in force: inside the allowlist yes, the canary no. */
  int fd = open2(a->t->good_file);
  if (fd < 0)
    return 12;
  close(fd);
  fd = open2(a->t->canary);
  if (fd >= 0 || errno != EACCES)
    return 13;
  /* The filter is in force too: no ruleset can be made any more, so
   * none can be built to stack on the broker's. */
  syscall(SYS_landlock_create_ruleset, NULL, 0,
          LANDLOCK_CREATE_RULESET_VERSION);
  return 14;
}

START_TEST(broker_sandbox_enforces_landlock_and_its_filter) {
  broker_test_tree t;
  broker_test_tree_make(&t);
  sbx_allowlist *list = broker_test_tree_allowlist(&t, "worker");
  sbx_bpf_program program = {0};
  GError *error = NULL;
  ck_assert_msg(sbx_broker_sandbox_compile(&program, &error), "%s",
                error ? error->message : "");
  sandbox_args a = {&t, list, &program};
  ck_assert_int_eq(broker_test_run_in_child(sandboxed_child, &a), 128 + SIGSYS);
  sbx_bpf_program_clear(&program);
  sbx_allowlist_free(list);
  broker_test_tree_free(&t);
}
END_TEST

static char *read_audit(fixture *f) {
  char *text = NULL;
  ck_assert(g_file_get_contents(f->audit_path, &text, NULL, NULL));
  return text;
}

START_TEST(broker_serves_every_command_and_audits_under_its_filter) {
  fixture f;
  memset(&f, 0, sizeof(f));
  broker_test_tree_make(&f.t);
  f.list = broker_test_tree_allowlist(&f.t, "worker");
  f.audit_path = broker_test_path(&f.t, "../audit.log");
  f.audit_fd =
      open(f.audit_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  ck_assert_int_ge(f.audit_fd, 0);
  sbx_broker_config cfg = {.audit_fd = f.audit_fd, .audit_grants = true};
  start_with(&f, &cfg);
  ck_assert_int_eq(status_field(sbx_broker_pid(f.b), "Seccomp"), 2);
  sbx_broker_client c;
  sbx_broker_client_init(&c, connect_worker(&f));

  int fd = sbx_broker_open(&c, f.t.good_file, O_RDONLY, 0);
  ck_assert_int_ge(fd, 0);
  close(fd);
  ck_assert_int_eq(sbx_broker_access(&c, f.t.good_file, R_OK, 0), 0);
  struct stat st;
  ck_assert_int_eq(sbx_broker_stat(&c, f.t.good_file, &st), 0);
  ck_assert_int_eq(st.st_size, 4);
  char *link = broker_test_path(&f.t, "good/link");
  ck_assert_int_eq(symlink("file", link), 0);
  ck_assert_int_eq(sbx_broker_lstat(&c, link, &st), 0);
  ck_assert(S_ISLNK(st.st_mode));
  struct statx stx;
  ck_assert_int_eq(sbx_broker_statx(&c, f.t.good_file, 0, STATX_SIZE, &stx), 0);
  ck_assert_uint_eq(stx.stx_size, 4);
  char buf[64];
  ck_assert_int_eq(sbx_broker_readlink(&c, link, buf, sizeof(buf)), 4);
  ck_assert(memcmp(buf, "file", 4) == 0);
  char *dir = broker_test_path(&f.t, "rw/dir");
  char *a = broker_test_path(&f.t, "rw/a");
  char *b = broker_test_path(&f.t, "rw/b");
  ck_assert_int_eq(sbx_broker_mkdir(&c, dir, 0755), 0);
  ck_assert_int_eq(sbx_broker_rmdir(&c, dir), 0);
  fd = sbx_broker_open(&c, a, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ck_assert_int_ge(fd, 0);
  close(fd);
  fd = sbx_broker_open(&c, f.t.existing, O_RDWR | O_TRUNC, 0);
  ck_assert_int_ge(fd, 0);
  close(fd);
  ck_assert_int_eq(sbx_broker_rename(&c, a, b, 0), 0);
  ck_assert_int_eq(sbx_broker_rename(&c, b, f.t.existing, RENAME_EXCHANGE), 0);
  ck_assert_int_eq(sbx_broker_rename(&c, b, f.t.existing, RENAME_NOREPLACE),
                   -EEXIST);
  ck_assert_int_eq(sbx_broker_unlink(&c, b), 0);
  char *tmp = broker_test_path(&f.t, "tmp/t");
  fd = sbx_broker_open(&c, tmp, O_RDWR | O_CREAT | O_EXCL, 0600);
  ck_assert_int_ge(fd, 0);
  close(fd);
  ck_assert_int_eq(sbx_broker_open(&c, f.t.canary, O_RDONLY, 0), -EACCES);

  /* The broker lived through all of it, and logged each decision. */
  sbx_broker_stats stats;
  ck_assert(sbx_broker_get_stats(f.b, &stats, NULL));
  ck_assert_uint_eq(stats.denied, 1);
  char *log = read_audit(&f);
  /* Operations and flags as the table of file-system calls names them:
   * stat, lstat and statx are all the stat operation. */
  g_autofree char *lstat_line = g_strdup_printf(
      "granted op=stat path=\"%s\" flags=AT_SYMLINK_NOFOLLOW ", link);
  g_autofree char *mkdir_line =
      g_strdup_printf("granted op=mkdir path=\"%s\" flags=0755 ", dir);
  const char *ops[] = {"granted op=open",     "granted op=access",
                       "granted op=stat",     lstat_line,
                       "granted op=readlink", mkdir_line,
                       "granted op=rmdir",    "granted op=rename",
                       "granted op=unlink",   "denied op=open"};
  for (size_t i = 0; i < G_N_ELEMENTS(ops); i++)
    ck_assert_msg(strstr(log, ops[i]) != NULL, "no '%s' in the audit log",
                  ops[i]);
  ck_assert_int_eq(status_field(sbx_broker_pid(f.b), "Seccomp"), 2);
  g_free(log);
  g_free(link);
  g_free(dir);
  g_free(a);
  g_free(b);
  g_free(tmp);
  close(c.channel);
  stop(&f);
}
END_TEST

/* ---- B5: numeric fields ------------------------------------------------- */

/* One raw request datagram: header and paths; returns its length. */
static size_t make_request(unsigned char *buf, uint16_t command, uint32_t flags,
                           uint32_t arg, const char *path, const char *path2) {
  sbx_broker_request h = {.magic = SBX_BROKER_MAGIC,
                          .version = SBX_BROKER_VERSION,
                          .command = command,
                          .id = 7,
                          .flags = flags,
                          .arg = arg};
  size_t len = sizeof(h);
  if (path) {
    h.path_len = (uint16_t)(strlen(path) + 1);
    memcpy(buf + len, path, h.path_len);
    len += h.path_len;
  }
  if (path2) {
    h.path2_len = (uint16_t)(strlen(path2) + 1);
    memcpy(buf + len, path2, h.path2_len);
    len += h.path2_len;
  }
  memcpy(buf, &h, sizeof(h));
  return len;
}

/* Sends one raw request with a fresh reply socket; returns the reply's
 * result, or INT32_MIN when the broker closed the channel instead. */
static int32_t raw_call(int ch, const unsigned char *buf, size_t len) {
  int sv[2];
  ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv),
                   0);
  broker_test_send_raw(ch, buf, len, &sv[1], 1);
  close(sv[1]);
  sbx_broker_reply rep;
  memset(&rep, 0, sizeof(rep));
  struct pollfd p = {.fd = sv[0], .events = POLLIN};
  ck_assert_int_eq(poll(&p, 1, 3000), 1);
  ssize_t n = recv(sv[0], &rep, sizeof(rep), MSG_DONTWAIT);
  close(sv[0]);
  if (n == 0) {
    ck_assert(broker_test_channel_closed(ch));
    return INT32_MIN;
  }
  ck_assert_int_ge(n, (ssize_t)sizeof(rep));
  ck_assert_uint_eq(rep.id, 7);
  return rep.result;
}

START_TEST(broker_refuses_access_modes_and_fields_out_of_range) {
  fixture f;
  start(&f);
  sbx_broker_client c;
  sbx_broker_client_init(&c, connect_worker(&f));
  /* Controls: every valid mode, and the documented answer for X_OK. */
  ck_assert_int_eq(sbx_broker_access(&c, f.t.existing, F_OK, 0), 0);
  ck_assert_int_eq(sbx_broker_access(&c, f.t.existing, R_OK | W_OK,
                                     AT_EACCESS | AT_SYMLINK_NOFOLLOW),
                   0);
  ck_assert_int_eq(sbx_broker_access(&c, f.t.existing, X_OK, 0), -EACCES);
  ck_assert_int_eq(access(f.t.existing, 8), -1); /* the kernel agrees */
  ck_assert_int_eq(errno, EINVAL);
  /* Modes and flags outside F_OK/R_OK/W_OK/X_OK and the AT_ set. */
  const int bad_modes[] = {8, 16, 0x80, -1, R_OK | 0x100, INT32_MIN};
  for (size_t i = 0; i < G_N_ELEMENTS(bad_modes); i++)
    ck_assert_int_eq(sbx_broker_access(&c, f.t.existing, bad_modes[i], 0),
                     -EINVAL);
  ck_assert_int_eq(sbx_broker_access(&c, f.t.existing, R_OK, AT_EMPTY_PATH),
                   -EINVAL);
  ck_assert_int_eq(sbx_broker_open(&c, f.t.good_file, O_RDONLY | (1 << 30), 0),
                   -EINVAL);
  struct statx stx;
  ck_assert_int_eq(
      sbx_broker_statx(&c, f.t.good_file, 0, STATX_BASIC_STATS, &stx), 0);
  ck_assert_int_eq(
      sbx_broker_statx(&c, f.t.good_file, 0, STATX__RESERVED, &stx), -EINVAL);
  ck_assert_int_eq(
      sbx_broker_statx(&c, f.t.good_file, AT_REMOVEDIR, STATX_SIZE, &stx),
      -EINVAL);
  char *a = broker_test_path(&f.t, "rw/a");
  ck_assert_int_eq(sbx_broker_rename(&c, f.t.existing, a, RENAME_WHITEOUT),
                   -EINVAL);
  ck_assert_int_eq(sbx_broker_rename(&c, f.t.existing, a,
                                     RENAME_EXCHANGE | RENAME_NOREPLACE),
                   -EINVAL);

  /* The same fields written by a hostile client close its channel; the
   * valid datagram beside each is answered. */
  static unsigned char buf[SBX_BROKER_MAX_REQUEST];
  struct {
    uint16_t command;
    uint32_t good_flags, good_arg, bad_flags, bad_arg;
    bool two_paths;
  } cases[] = {
      {SBX_BROKER_CMD_ACCESS, R_OK, 0, 8, 0, false},
      {SBX_BROKER_CMD_ACCESS, W_OK, 0, 0xffffffffu, 0, false},
      {SBX_BROKER_CMD_ACCESS, R_OK, AT_EACCESS, R_OK, 0x10000, false},
      {SBX_BROKER_CMD_OPEN, O_RDONLY, 0, O_RDONLY, 010000, false},
      {SBX_BROKER_CMD_READLINK, 0, 16, 0, 0, false},
      {SBX_BROKER_CMD_READLINK, 0, PATH_MAX, 0, PATH_MAX + 1, false},
      {SBX_BROKER_CMD_STAT, 0, 0, 1, 0, false},
      {SBX_BROKER_CMD_STATX, 0, STATX_SIZE, 0, STATX__RESERVED, false},
      {SBX_BROKER_CMD_MKDIR, 0, 0755, 0, 0100000, false},
      {SBX_BROKER_CMD_RENAME, RENAME_NOREPLACE, 0, RENAME_WHITEOUT, 0, true},
      {SBX_BROKER_CMD_RENAME, 0, 0, 0, 1, true},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    const char *p1 = cases[i].command == SBX_BROKER_CMD_MKDIR ? a
                     : cases[i].two_paths                     ? f.t.existing
                                                              : f.t.good_file;
    const char *p2 = cases[i].two_paths ? a : NULL;
    int ch = connect_worker(&f);
    size_t len = make_request(buf, cases[i].command, cases[i].good_flags,
                              cases[i].good_arg, p1, p2);
    int32_t r = raw_call(ch, buf, len);
    ck_assert_msg(r != INT32_MIN, "case %zu: valid request refused", i);
    if (cases[i].two_paths && r == 0) /* put it back for the next case */
      ck_assert_int_eq(rename(a, f.t.existing), 0);
    if (cases[i].command == SBX_BROKER_CMD_MKDIR && r == 0)
      ck_assert_int_eq(rmdir(a), 0);
    len = make_request(buf, cases[i].command, cases[i].bad_flags,
                       cases[i].bad_arg, p1, p2);
    ck_assert_msg(raw_call(ch, buf, len) == INT32_MIN,
                  "case %zu: out-of-range field answered", i);
    close(ch);
  }
  /* A path length over PATH_MAX in the header. */
  int ch = connect_worker(&f);
  size_t len = make_request(buf, SBX_BROKER_CMD_STAT, 0, 0, "/x", NULL);
  sbx_broker_request h;
  memcpy(&h, buf, sizeof(h));
  h.path_len = PATH_MAX + 1;
  memcpy(buf, &h, sizeof(h));
  ck_assert(raw_call(ch, buf, len) == INT32_MIN);
  close(ch);
  /* The well-behaved client was never affected. */
  ck_assert_int_eq(sbx_broker_access(&c, f.t.existing, R_OK, 0), 0);
  sbx_broker_stats st;
  ck_assert(sbx_broker_get_stats(f.b, &st, NULL));
  ck_assert_uint_eq(st.bad_messages, G_N_ELEMENTS(cases) + 1);
  ck_assert_uint_eq(st.channels, 1);
  g_free(a);
  close(c.channel);
  stop(&f);
}
END_TEST

/* ---- F4: the broker out of descriptors ---------------------------------- */

START_TEST(broker_out_of_descriptors_fails_cleanly_and_recovers) {
  fixture f;
  memset(&f, 0, sizeof(f));
  broker_test_tree_make(&f.t);
  f.list = broker_test_tree_allowlist(&f.t, "worker");
  f.audit_fd = -1;
  sbx_broker_config cfg = {.audit_fd = -1, .max_fds = 32};
  start_with(&f, &cfg);
  /* Controls: two workers served, one of them through a thread channel
   * already attached, the other not yet. */
  sbx_broker_client pooled, fresh;
  sbx_broker_client_init(&pooled, connect_worker(&f));
  sbx_broker_client_init(&fresh, connect_worker(&f));
  int fd = sbx_broker_open(&pooled, f.t.good_file, O_RDONLY, 0);
  ck_assert_int_ge(fd, 0);
  close(fd);
  sbx_broker_stats st;
  ck_assert(sbx_broker_get_stats(f.b, &st, NULL));
  ck_assert_uint_eq(st.thread_channels, 1);

  /* Fill the broker's descriptor table with channels, until the broker
   * says it has no room. */
  int extra[64];
  size_t n_extra = 0;
  GError *error = NULL;
  for (;;) {
    ck_assert_uint_lt(n_extra, G_N_ELEMENTS(extra));
    int ch = sbx_broker_connect(f.b, "worker", &error);
    if (ch < 0)
      break;
    extra[n_extra++] = ch;
  }
  ck_assert_msg(strstr(error->message, g_strerror(EMFILE)) != NULL, "%s",
                error->message);
  g_clear_error(&error);

  /* Every kind of request fails at once with ENFILE, on either path. */
  ck_assert_int_eq(sbx_broker_open(&pooled, f.t.good_file, O_RDONLY, 0),
                   -ENFILE);
  struct stat sb;
  ck_assert_int_eq(sbx_broker_stat(&pooled, f.t.good_file, &sb), -ENFILE);
  ck_assert_int_eq(sbx_broker_open(&fresh, f.t.good_file, O_RDONLY, 0),
                   -ENFILE);
  ck_assert_int_eq(sbx_broker_stat(&fresh, f.t.good_file, &sb), -ENFILE);

  /* Free a few descriptors: the broker serves both again. */
  for (size_t i = 0; i < 4; i++)
    close(extra[--n_extra]);
  ck_assert(sbx_broker_get_stats(f.b, &st, NULL));
  ck_assert_uint_ge(st.dropped, 4);
  fd = sbx_broker_open(&pooled, f.t.good_file, O_RDONLY, 0);
  ck_assert_int_ge(fd, 0);
  close(fd);
  fd = sbx_broker_open(&fresh, f.t.good_file, O_RDONLY, 0);
  ck_assert_int_ge(fd, 0);
  char *text = broker_test_read_fd(fd);
  ck_assert_str_eq(text, "good");
  g_free(text);
  close(fd);
  ck_assert_int_eq(sbx_broker_stat(&fresh, f.t.good_file, &sb), 0);
  while (n_extra > 0)
    close(extra[--n_extra]);
  close(pooled.channel);
  close(fresh.channel);
  stop(&f);
}
END_TEST

/* ---- B7: floods and clients that never read ----------------------------- */

#define VICTIM_ROUNDS 300

#define FLOOD_UNREAD 64

/* In the flooding child: requests as fast as the channels take them, on
 * the worker channel (keeping the last FLOOD_UNREAD reply sockets open,
 * unread) and on a thread channel, never reading a reply. Runs until
 * killed. */
static void G_GNUC_NORETURN flood(int ch, const char *path) {
  static unsigned char buf[SBX_BROKER_MAX_REQUEST];
  int tc[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, tc) != 0)
    _exit(2);
  size_t len = make_request(buf, SBX_BROKER_ATTACH, 0, 0, NULL, NULL);
  broker_test_send_raw(ch, buf, len, &tc[1], 1);
  close(tc[1]);
  sbx_broker_reply rep;
  if (recv(tc[0], &rep, sizeof(rep), 0) != (ssize_t)sizeof(rep) ||
      rep.result != 0)
    _exit(3);
  len = make_request(buf, SBX_BROKER_CMD_OPEN, O_RDONLY, 0, path, NULL);
  int unread[FLOOD_UNREAD];
  for (size_t i = 0; i < FLOOD_UNREAD; i++)
    unread[i] = -1;
  for (size_t i = 0;; i = (i + 1) % FLOOD_UNREAD) {
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) != 0)
      _exit(4);
    struct iovec iov = {.iov_base = buf, .iov_len = len};
    sbx_broker_fd_cmsg cb;
    struct msghdr with_fd = {.msg_iov = &iov, .msg_iovlen = 1};
    sbx_broker_msg_attach_fd(&with_fd, &cb, sv[1]);
    sendmsg(ch, &with_fd, MSG_DONTWAIT | MSG_NOSIGNAL);
    close(sv[1]);
    if (unread[i] >= 0)
      close(unread[i]);
    unread[i] = sv[0];
    send(tc[0], buf, len, MSG_DONTWAIT | MSG_NOSIGNAL);
  }
}

static long vm_rss_kib(pid_t pid) {
  return status_field(pid, "VmRSS");
}

START_TEST(broker_serves_others_while_one_worker_floods_and_never_reads) {
  fixture f;
  start(&f);
  sbx_broker_client victim;
  sbx_broker_client_init(&victim, connect_worker(&f));
  int hostile = connect_worker(&f);
  /* Control: the victim is served before the flood, too. */
  int fd = sbx_broker_open(&victim, f.t.good_file, O_RDONLY, 0);
  ck_assert_int_ge(fd, 0);
  close(fd);
  long rss_before = vm_rss_kib(sbx_broker_pid(f.b));
  ck_assert_int_gt(rss_before, 0);
  pid_t flooder = fork();
  ck_assert_int_ge(flooder, 0);
  if (flooder == 0) {
    close(victim.channel);
    flood(hostile, f.t.good_file);
  }
  close(hostile);
  sbx_broker_stats st;
  /* Wait until the flood is under way. */
  for (int i = 0; i < 1000; i++) {
    ck_assert(sbx_broker_get_stats(f.b, &st, NULL));
    if (st.requests > 1000)
      break;
    usleep(1000);
  }
  ck_assert_uint_gt(st.requests, 1000);
  uint64_t before = st.requests;
  for (int i = 0; i < VICTIM_ROUNDS; i++) {
    fd = sbx_broker_open(&victim, f.t.good_file, O_RDONLY, 0);
    ck_assert_int_ge(fd, 0);
    close(fd);
    struct stat sb;
    ck_assert_int_eq(sbx_broker_stat(&victim, f.t.good_file, &sb), 0);
  }
  ck_assert(sbx_broker_get_stats(f.b, &st, NULL));
  /* The flood went on meanwhile (it was served, not starved), and the
   * broker holds no more memory for it than a fixed amount. */
  ck_assert_uint_ge(st.requests - before, 2 * VICTIM_ROUNDS + 100);
  ck_assert_uint_eq(st.bad_messages, 0);
  long rss_after = vm_rss_kib(sbx_broker_pid(f.b));
  ck_assert_msg(rss_after - rss_before < 16 * 1024,
                "broker grew from %ld to %ld KiB", rss_before, rss_after);
  ck_assert_int_eq(kill(flooder, SIGKILL), 0);
  ck_assert_int_eq(waitpid(flooder, NULL, 0), flooder);
  fd = sbx_broker_open(&victim, f.t.good_file, O_RDONLY, 0);
  ck_assert_int_ge(fd, 0);
  close(fd);
  /* What the flooder left queued is bounded: the broker works through it
   * and then closes that channel. */
  for (int i = 0; i < 2000; i++) {
    ck_assert(sbx_broker_get_stats(f.b, &st, NULL));
    if (st.channels == 1 && st.thread_channels == 1)
      break;
    usleep(5000);
  }
  ck_assert_uint_eq(st.channels, 1);
  ck_assert_uint_eq(st.thread_channels, 1); /* the victim's */
  close(victim.channel);
  stop(&f);
}
END_TEST

/* Turns are per worker: a worker whose 12 threads each queued requests on
 * a thread channel of their own gets one request served per turn, like a
 * worker asking from one thread. The broker is stopped while both queue,
 * so every request is waiting when it resumes; the audit log (grants on)
 * gives the order of service. */
#define TURN_CHANNELS 12
#define TURN_QUEUED 8

/* A thread channel attached through the worker channel ch. */
static int attach_thread_channel(int ch) {
  unsigned char buf[sizeof(sbx_broker_request)];
  int tc[2];
  ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, tc),
                   0);
  size_t len = make_request(buf, SBX_BROKER_ATTACH, 0, 0, NULL, NULL);
  broker_test_send_raw(ch, buf, len, &tc[1], 1);
  close(tc[1]);
  sbx_broker_reply rep;
  ck_assert_int_eq(recv(tc[0], &rep, sizeof(rep), 0), (ssize_t)sizeof(rep));
  ck_assert_int_eq(rep.result, 0);
  return tc[0];
}

/* One reply on a thread channel (within 5 s); the descriptor it carries
 * is closed. Returns its result. */
static int32_t thread_reply(int tc) {
  struct pollfd p = {.fd = tc, .events = POLLIN};
  ck_assert_int_eq(poll(&p, 1, 5000), 1);
  sbx_broker_reply rep;
  memset(&rep, 0, sizeof(rep));
  struct iovec iov = {.iov_base = &rep, .iov_len = sizeof(rep)};
  union {
    char buf[CMSG_SPACE(sizeof(int))];
    struct cmsghdr align;
  } cb;
  struct msghdr m = {.msg_iov = &iov,
                     .msg_iovlen = 1,
                     .msg_control = cb.buf,
                     .msg_controllen = sizeof(cb.buf)};
  ck_assert_int_eq(recvmsg(tc, &m, MSG_CMSG_CLOEXEC), (ssize_t)sizeof(rep));
  struct cmsghdr *c = CMSG_FIRSTHDR(&m);
  if (c && c->cmsg_type == SCM_RIGHTS) {
    int fd;
    memcpy(&fd, CMSG_DATA(c), sizeof(fd));
    close(fd);
  }
  return rep.result;
}

static bool process_stopped(pid_t pid) {
  g_autofree char *path = g_strdup_printf("/proc/%d/stat", (int)pid);
  g_autofree char *text = NULL;
  ck_assert(g_file_get_contents(path, &text, NULL, NULL));
  const char *paren = strrchr(text, ')');
  return paren && paren[1] == ' ' && paren[2] == 'T';
}

START_TEST(a_worker_flooding_from_many_threads_gets_one_turn_like_any_other) {
  fixture f;
  memset(&f, 0, sizeof(f));
  broker_test_tree_make(&f.t);
  f.list = broker_test_tree_allowlist(&f.t, "worker");
  f.audit_path = broker_test_path(&f.t, "../audit.log");
  f.audit_fd =
      open(f.audit_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  ck_assert_int_ge(f.audit_fd, 0);
  sbx_broker_config cfg = {.audit_fd = f.audit_fd, .audit_grants = true};
  start_with(&f, &cfg);
  int flooder = connect_worker(&f);
  int victim = connect_worker(&f);
  int fc[TURN_CHANNELS];
  for (int i = 0; i < TURN_CHANNELS; i++)
    fc[i] = attach_thread_channel(flooder);
  int vc = attach_thread_channel(victim);
  /* Control: each is served on its own. */
  unsigned char flood_req[SBX_BROKER_MAX_REQUEST];
  unsigned char victim_req[SBX_BROKER_MAX_REQUEST];
  size_t flood_len = make_request(flood_req, SBX_BROKER_CMD_OPEN, O_RDONLY, 0,
                                  f.t.good_file, NULL);
  size_t victim_len = make_request(victim_req, SBX_BROKER_CMD_OPEN, O_RDONLY, 0,
                                   f.t.deep, NULL);
  broker_test_send_raw(fc[0], flood_req, flood_len, NULL, 0);
  ck_assert_int_eq(thread_reply(fc[0]), 0);
  broker_test_send_raw(vc, victim_req, victim_len, NULL, 0);
  ck_assert_int_eq(thread_reply(vc), 0);

  pid_t broker = sbx_broker_pid(f.b);
  ck_assert_int_eq(kill(broker, SIGSTOP), 0);
  for (int i = 0; i < 500 && !process_stopped(broker); i++)
    usleep(2000);
  ck_assert(process_stopped(broker));
  off_t mark = lseek(f.audit_fd, 0, SEEK_END);
  /* The flooder's requests arrive first, the victim's last. */
  for (int q = 0; q < TURN_QUEUED; q++)
    for (int i = 0; i < TURN_CHANNELS; i++)
      broker_test_send_raw(fc[i], flood_req, flood_len, NULL, 0);
  broker_test_send_raw(vc, victim_req, victim_len, NULL, 0);
  ck_assert_int_eq(kill(broker, SIGCONT), 0);
  ck_assert_int_eq(thread_reply(vc), 0);
  for (int q = 0; q < TURN_QUEUED; q++)
    for (int i = 0; i < TURN_CHANNELS; i++)
      ck_assert_int_eq(thread_reply(fc[i]), 0);

  g_autofree char *log = read_audit(&f);
  ck_assert_int_le(mark, (off_t)strlen(log));
  g_auto(GStrv) lines = g_strsplit(log + mark, "\n", -1);
  g_autofree char *flood_path = g_strdup_printf("path=\"%s\"", f.t.good_file);
  g_autofree char *victim_path = g_strdup_printf("path=\"%s\"", f.t.deep);
  int served_before = -1, flood_served = 0;
  for (char **l = lines; *l; l++) {
    if (!strstr(*l, "op=open"))
      continue;
    if (strstr(*l, victim_path)) {
      ck_assert_int_eq(served_before, -1);
      served_before = flood_served;
    } else if (strstr(*l, flood_path)) {
      flood_served++;
    }
  }
  /* Every request was served, and the victim's in the first turn: after
   * at most the one request of the flooder's turn, not after one request
   * of each of its channels. */
  ck_assert_int_eq(flood_served, TURN_QUEUED * TURN_CHANNELS);
  ck_assert_msg(served_before >= 0 && served_before <= 1,
                "the victim was served after %d of the flooder's requests",
                served_before);
  for (int i = 0; i < TURN_CHANNELS; i++)
    close(fc[i]);
  close(vc);
  close(flooder);
  close(victim);
  stop(&f);
}
END_TEST

/* ---- S26: magic links and /proc/self ------------------------------------ */

typedef struct {
  fixture *f;
  pid_t broker;
} proc_args;

#define EXPECT(cond)                                             \
  do {                                                           \
    if (!(cond)) {                                               \
      fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #cond); \
      return 1;                                                  \
    }                                                            \
  } while (0)

/* Reads the whole file at fd (a descriptor we own) into a string. */
static char *slurp(int fd) {
  char *s = broker_test_read_fd(fd);
  close(fd);
  return s;
}

/* The worker: a child of the test, in its own network namespace when it
 * can get one, so that "whose /proc/net" has a visible answer. */
static int proc_worker(void *arg) {
  proc_args *a = arg;
  fixture *f = a->f;
  sbx_broker_client c;
  sbx_broker_client_init(&c, connect_worker(f));
  bool own_net = unshare(CLONE_NEWUSER | CLONE_NEWNET) == 0;

  /* /proc/self is this process, not the broker. */
  int fd = sbx_broker_open(&c, "/proc/self/status", O_RDONLY, 0);
  EXPECT(fd >= 0);
  char *text = slurp(fd);
  char *want = g_strdup_printf("\nPid:\t%d\n", (int)getpid());
  EXPECT(strstr(text, want) != NULL);
  g_free(want);
  g_free(text);
  char *by_pid = g_strdup_printf("/proc/%d/cmdline", (int)getpid());
  fd = sbx_broker_open(&c, by_pid, O_RDONLY, 0);
  EXPECT(fd >= 0);
  close(fd);
  g_free(by_pid);

  /* procfs's own link /proc/net names "self" too: the worker's. */
  fd = sbx_broker_open(&c, "/proc/net/dev", O_RDONLY, 0);
  EXPECT(fd >= 0);
  text = slurp(fd);
  fd = open("/proc/net/dev", O_RDONLY | O_CLOEXEC);
  EXPECT(fd >= 0);
  char *mine = slurp(fd);
  EXPECT(strcmp(text, mine) == 0);
  if (own_net) {
    char *path = g_strdup_printf("/proc/%d/net/dev", (int)a->broker);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    g_free(path);
    EXPECT(fd >= 0);
    char *brokers = slurp(fd);
    EXPECT(strcmp(brokers, mine) != 0); /* the views differ... */
    g_free(brokers);
  }
  g_free(text);
  g_free(mine);

  /* Magic links: each works outside the broker (control) and is refused
   * through it. */
  int canary = open(f->t.canary, O_RDONLY | O_CLOEXEC);
  EXPECT(canary >= 0);
  EXPECT(chdir(f->t.root) == 0);
  char *fd_link = g_strdup_printf("/proc/self/fd/%d", canary);
  char *cwd_link = g_strdup("/proc/self/cwd/canary");
  const char *magic[] = {"/proc/self/root/etc/passwd",
                         "/proc/self/root/etc/shadow",
                         fd_link,
                         "/proc/self/exe",
                         cwd_link,
                         "/proc/self/cwd",
                         "/proc/self/root",
                         "/proc/self/ns/net",
                         "/proc/thread-self/status"};
  for (size_t i = 0; i < G_N_ELEMENTS(magic); i++) {
    if (i != 1) { /* shadow is not readable by everyone */
      fd = open(magic[i], O_RDONLY | O_CLOEXEC);
      EXPECT(fd >= 0);
      close(fd);
    }
    fd = sbx_broker_open(&c, magic[i], O_RDONLY, 0);
    if (fd != -EACCES) {
      fprintf(stderr, "%s: %d\n", magic[i], fd);
      return 1;
    }
    struct stat sb;
    EXPECT(sbx_broker_stat(&c, magic[i], &sb) == -EACCES);
  }
  g_free(fd_link);
  g_free(cwd_link);
  close(canary);

  /* The broker's and the host's /proc directories are other processes'. */
  char *other[] = {
      g_strdup_printf("/proc/%d/status", (int)a->broker),
      g_strdup_printf("/proc/%d/root/etc/passwd", (int)a->broker),
      g_strdup_printf("/proc/%d/environ", (int)getppid()),
      g_strdup("/proc/1/status"),
  };
  for (size_t i = 0; i < G_N_ELEMENTS(other); i++) {
    EXPECT(sbx_broker_open(&c, other[i], O_RDONLY, 0) == -EACCES);
    g_free(other[i]);
  }
  /* Nor through a symlink in an allowed tree. */
  char *link = broker_test_path(&f->t, "good/proc_broker");
  char *target = g_strdup_printf("/proc/%d/status", (int)a->broker);
  EXPECT(symlink(target, link) == 0);
  EXPECT(sbx_broker_open(&c, link, O_RDONLY, 0) == -EACCES);
  g_free(link);
  g_free(target);
  close(c.channel);
  return 0;
}

START_TEST(broker_proc_self_means_the_worker_and_magic_links_stay_shut) {
  fixture f;
  memset(&f, 0, sizeof(f));
  broker_test_tree_make(&f.t);
  f.list = broker_test_tree_allowlist(&f.t, "worker");
  GError *error = NULL;
  ck_assert_msg(sbx_allowlist_add(f.list, "/proc/", SBX_PERM_READ_ONLY, &error),
                "%s", error ? error->message : "");
  f.audit_fd = -1;
  sbx_broker_config cfg = {.audit_fd = -1};
  start_with(&f, &cfg);
  proc_args a = {&f, sbx_broker_pid(f.b)};
  ck_assert_int_eq(broker_test_run_in_child(proc_worker, &a), 0);
  stop(&f);
}
END_TEST

/* ---- the audit log's sinks and the control channel --------------------- */

typedef enum { SINK_PIPE, SINK_SHARED_FIFO, SINK_TERMINAL, SINK_SOCKET } sink;

/* Makes a sink of that kind: returns the broker's end, *reader the end
 * the test reads lines from, or -1 when it can only be opened after the
 * broker started (then from fifo). */
static int make_sink(sink kind, const char *fifo, int *reader) {
  int fds[2];
  switch (kind) {
    case SINK_PIPE:
      ck_assert_int_eq(pipe2(fds, O_CLOEXEC), 0);
      *reader = fds[0];
      return fds[1];
    case SINK_SHARED_FIFO: {
      /* No reader while the broker starts: it cannot reopen the FIFO
       * without waiting (ENXIO), so it shares the description as it is
       * and writes with RWF_NOWAIT. */
      ck_assert_int_eq(mkfifo(fifo, 0600), 0);
      int r = open(fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
      ck_assert_int_ge(r, 0);
      int w = open(fifo, O_WRONLY | O_CLOEXEC);
      ck_assert_int_ge(w, 0);
      close(r);
      *reader = -1;
      return w;
    }
    case SINK_TERMINAL: {
      /* /dev/ptmx is never reopened (that would make a new terminal), and
       * terminals refuse RWF_NOWAIT: poll, then write. */
      int master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
      ck_assert_int_ge(master, 0);
      ck_assert_int_eq(grantpt(master), 0);
      ck_assert_int_eq(unlockpt(master), 0);
      *reader = open(ptsname(master), O_RDWR | O_NOCTTY | O_CLOEXEC);
      ck_assert_int_ge(*reader, 0);
      struct termios t;
      ck_assert_int_eq(tcgetattr(*reader, &t), 0);
      cfmakeraw(&t);
      ck_assert_int_eq(tcsetattr(*reader, TCSANOW, &t), 0);
      return master;
    }
    case SINK_SOCKET:
      ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds),
                       0);
      *reader = fds[1];
      return fds[0];
  }
  return -1;
}

/* Reads from fd until text holds needle, for up to 5 s. */
static bool read_until(int fd, const char *needle, GString *text) {
  gint64 deadline = now_ms() + 5000;
  while (!strstr(text->str, needle)) {
    gint64 left = deadline - now_ms();
    struct pollfd p = {.fd = fd, .events = POLLIN};
    if (left <= 0 || poll(&p, 1, (int)left) != 1)
      return false;
    char buf[4096];
    ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0)
      return false;
    g_string_append_len(text, buf, n);
  }
  return true;
}

START_TEST(broker_writes_its_audit_log_to_every_kind_of_sink_under_its_filter) {
  static const char *const names[] = {"pipe", "shared FIFO", "terminal",
                                      "socket"};
  for (sink kind = SINK_PIPE; kind <= SINK_SOCKET; kind++) {
    fixture f;
    memset(&f, 0, sizeof(f));
    broker_test_tree_make(&f.t);
    f.list = broker_test_tree_allowlist(&f.t, "worker");
    int reader;
    g_autofree char *fifo = broker_test_path(&f.t, "../audit.fifo");
    f.audit_fd = make_sink(kind, fifo, &reader);
    sbx_broker_config cfg = {.audit_fd = f.audit_fd};
    start_with(&f, &cfg);
    if (reader < 0) {
      reader = open(fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
      ck_assert_int_ge(reader, 0);
    }
    ck_assert_int_eq(status_field(sbx_broker_pid(f.b), "Seccomp"), 2);
    sbx_broker_client c;
    sbx_broker_client_init(&c, connect_worker(&f));
    ck_assert_int_eq(sbx_broker_open(&c, f.t.canary, O_RDONLY, 0), -EACCES);
    g_autoptr(GString) text = g_string_new(NULL);
    g_autofree char *want = g_strdup_printf("path=\"%s\"", f.t.canary);
    ck_assert_msg(read_until(reader, want, text), "%s: no line in \"%s\"",
                  names[kind], text->str);
    ck_assert_msg(g_str_has_prefix(text->str, "sbx: denied op=open "), "%s: %s",
                  names[kind], text->str);
    sbx_broker_stats stats;
    ck_assert(sbx_broker_get_stats(f.b, &stats, NULL));
    ck_assert_uint_eq(stats.audit_dropped, 0);
    close(c.channel);
    int status = -1;
    ck_assert(sbx_broker_stop(f.b, &status, NULL));
    f.b = NULL;
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                  "%s: the broker ended with wait status 0x%x", names[kind],
                  status);
    close(reader);
    unlink(fifo);
    stop(&f);
  }
}
END_TEST

START_TEST(
    a_stopped_broker_fails_control_calls_in_time_and_late_replies_are_skipped) {
  fixture f;
  start(&f);
  /* Control: it answers at once. */
  int ch = connect_worker(&f);
  close(ch);
  ck_assert_int_eq(kill(sbx_broker_pid(f.b), SIGSTOP), 0);
  GError *error = NULL;
  gint64 t0 = now_ms();
  ck_assert_int_lt(sbx_broker_connect(f.b, "worker", &error), 0);
  gint64 waited = now_ms() - t0;
  ck_assert_msg(error && strstr(error->message, "did not answer") &&
                    strstr(error->message, "5000 ms"),
                "%s", error ? error->message : "no error");
  g_clear_error(&error);
  ck_assert_int_ge(waited, SBX_BROKER_REPLY_TIMEOUT_MS - 100);
  ck_assert_int_lt(waited, SBX_BROKER_REPLY_TIMEOUT_MS + 3000);

  /* It wakes up and answers the request that timed out: that reply must
   * not be taken for the next request's. One open later, the counters
   * must say so (the connect's reply was sent before it). */
  ck_assert_int_eq(kill(sbx_broker_pid(f.b), SIGCONT), 0);
  sbx_broker_client c;
  sbx_broker_client_init(&c, connect_worker(&f));
  int fd = sbx_broker_open(&c, f.t.good_file, O_RDONLY, 0);
  ck_assert_int_ge(fd, 0);
  close(fd);
  sbx_broker_stats stats;
  ck_assert(sbx_broker_get_stats(f.b, &stats, NULL));
  ck_assert_uint_eq(stats.requests, 1);
  close(c.channel);
  stop(&f);
}
END_TEST

START_TEST(a_stopped_broker_is_killed_by_stop_within_the_bound) {
  fixture f;
  start(&f);
  /* Control: a broker that runs leaves by itself, at once. */
  int status = -1;
  gint64 t0 = now_ms();
  ck_assert(sbx_broker_stop(f.b, &status, NULL));
  ck_assert_int_lt(now_ms() - t0, SBX_BROKER_EXIT_TIMEOUT_MS);
  ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);

  sbx_broker_config cfg = {.audit_fd = -1};
  start_with(&f, &cfg);
  pid_t pid = sbx_broker_pid(f.b);
  ck_assert_int_eq(kill(pid, SIGSTOP), 0);
  t0 = now_ms();
  ck_assert(sbx_broker_stop(f.b, &status, NULL));
  f.b = NULL;
  gint64 took = now_ms() - t0;
  ck_assert_int_ge(took, SBX_BROKER_EXIT_TIMEOUT_MS - 100);
  ck_assert_int_lt(
      took, SBX_BROKER_EXIT_TIMEOUT_MS + SBX_BROKER_REAP_TIMEOUT_MS + 1000);
  ck_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  ck_assert_int_eq(kill(pid, 0), -1);
  stop(&f);
}
END_TEST

/* ---- how replies are waited for ------------------------------------------ */

/* The fields of /proc/<pid>/stat after the command: [0] is the state
 * (field 3), [11] and [12] utime and stime (fields 14 and 15). */
static GStrv stat_fields(pid_t pid) {
  g_autofree char *path = g_strdup_printf("/proc/%d/stat", (int)pid);
  g_autofree char *text = NULL;
  ck_assert(g_file_get_contents(path, &text, NULL, NULL));
  const char *p = strrchr(text, ')');
  ck_assert_ptr_nonnull(p);
  GStrv fields = g_strsplit(p + 2, " ", 0);
  ck_assert_uint_ge(g_strv_length(fields), 13);
  return fields;
}

/* CPU time a process has used, in clock ticks. */
static long cpu_ticks(pid_t pid) {
  g_auto(GStrv) fields = stat_fields(pid);
  return atol(fields[11]) + atol(fields[12]);
}

/* Stops a process and waits until the kernel reports it stopped: a
 * SIGSTOP takes effect only when the process next enters the kernel. */
static void stop_process(pid_t pid) {
  ck_assert_int_eq(kill(pid, SIGSTOP), 0);
  for (int i = 0; i < 2000; i++) {
    g_auto(GStrv) fields = stat_fields(pid);
    if (fields[0][0] == 'T')
      return;
    g_usleep(1000);
  }
  ck_abort_msg("process %d did not stop", (int)pid);
}

/* The one pooled channel a client has used so far. */
static sbx_broker_client_slot *used_slot(sbx_broker_client *c) {
  for (size_t i = 0; i < SBX_BROKER_CLIENT_POOL; i++)
    if (c->pool[i].fd >= 0 && c->pool[i].state != 0)
      return &c->pool[i];
  return NULL;
}

static gpointer resume_later(gpointer arg) {
  g_usleep(30 * 1000);
  kill(GPOINTER_TO_INT(arg), SIGCONT);
  return NULL;
}

/* A brokered open of the good file, asked while the broker is stopped
 * for 30 ms: no poll can find its reply. The descriptor or -errno. */
static int open_while_stopped(const fixture *f, sbx_broker_client *c) {
  pid_t pid = sbx_broker_pid(f->b);
  stop_process(pid);
  GThread *th = g_thread_new("resume", resume_later, GINT_TO_POINTER(pid));
  int fd = sbx_broker_open(c, f->t.good_file, O_RDONLY | O_CLOEXEC, 0);
  g_thread_join(th);
  return fd;
}

/* A brokered open whose reply comes while the client polls, or only after
 * it gave up polling and sleeps, returns the same file; a channel whose
 * replies keep coming late stops polling, and still gets every reply. */
START_TEST(a_reply_is_taken_whether_it_comes_while_polling_or_after) {
  fixture f;
  start(&f);
  sbx_broker_client c;
  sbx_broker_client_init(&c, connect_worker(&f));
  struct stat want;
  ck_assert_int_eq(stat(f.t.good_file, &want), 0);

  int fd = sbx_broker_open(&c, f.t.good_file, O_RDONLY | O_CLOEXEC, 0);
  ck_assert_int_ge(fd, 0);
  ck_assert(broker_test_same_file(fd, &want));
  close(fd);
  sbx_broker_client_slot *slot = used_slot(&c);
  ck_assert_ptr_nonnull(slot);
  ck_assert_uint_gt(slot->spin, 0); /* a channel starts out polling */

  /* The broker is stopped for 30 ms per request: no poll can find the
   * reply, the client sleeps for it, and polls less each time. */
  unsigned before = slot->spin;
  for (int i = 0; i < 8 && slot->spin > 0; i++) {
    fd = open_while_stopped(&f, &c);
    ck_assert_int_ge(fd, 0);
    ck_assert(broker_test_same_file(fd, &want));
    close(fd);
    ck_assert_uint_lt(slot->spin, before);
    before = slot->spin;
  }
  ck_assert_uint_eq(slot->spin, 0);

  /* Without polling (and through the occasional probe) every reply still
   * arrives, on the same channel. */
  int channel = slot->fd;
  for (int i = 0; i < 300; i++) {
    fd = sbx_broker_open(&c, f.t.good_file, O_RDONLY | O_CLOEXEC, 0);
    ck_assert_int_ge(fd, 0);
    ck_assert(broker_test_same_file(fd, &want));
    close(fd);
  }
  ck_assert_int_eq(slot->fd, channel);
  close(c.channel);
  stop(&f);
}
END_TEST

/* In a child forked while a thread of its parent was polling for a reply
 * (the client's mark left set in the child's copy), the child's own
 * requests still poll: a late reply halves its channel's budget, which
 * only a request that polled does. */
typedef struct {
  fixture *f;
  sbx_broker_client *c;
} child_job;

static int child_polls(void *arg) {
  const child_job *j = arg;
  int fd = sbx_broker_open(j->c, j->f->t.good_file, O_RDONLY | O_CLOEXEC, 0);
  if (fd < 0)
    return 10;
  close(fd);
  sbx_broker_client_slot *slot = used_slot(j->c);
  if (!slot || slot->spin == 0)
    return 11;
  unsigned before = slot->spin;
  fd = open_while_stopped(j->f, j->c);
  if (fd < 0)
    return 13;
  close(fd);
  return slot->spin < before ? 0 : 14;
}

START_TEST(a_child_forked_while_its_parent_polled_still_polls) {
  fixture f;
  start(&f);
  sbx_broker_client c;
  sbx_broker_client_init(&c, connect_worker(&f));
  int fd = sbx_broker_open(&c, f.t.good_file, O_RDONLY | O_CLOEXEC, 0);
  ck_assert_int_ge(fd, 0);
  close(fd);
  /* As if another thread were polling when the child is forked. */
  __atomic_store_n(&c.polling, 0xffffffffu, __ATOMIC_RELEASE);
  child_job job = {.f = &f, .c = &c};
  ck_assert_int_eq(broker_test_run_in_child(child_polls, &job), 0);
  close(c.channel);
  stop(&f);
}
END_TEST

/* After serving, the broker polls for the next request only briefly: once
 * the workers stop asking, it sleeps and uses no CPU time. Control: while
 * a worker asks, its CPU time grows. */
START_TEST(an_idle_broker_sleeps_after_polling_briefly) {
  fixture f;
  start(&f);
  sbx_broker_client c;
  sbx_broker_client_init(&c, connect_worker(&f));
  pid_t pid = sbx_broker_pid(f.b);
  long t0 = cpu_ticks(pid);
  gint64 until = g_get_monotonic_time() + 400 * 1000;
  while (g_get_monotonic_time() < until) {
    int fd = sbx_broker_open(&c, f.t.good_file, O_RDONLY | O_CLOEXEC, 0);
    ck_assert_int_ge(fd, 0);
    close(fd);
  }
  long t1 = cpu_ticks(pid);
  ck_assert_int_gt(t1, t0);

  g_usleep(1000 * 1000);
  long t2 = cpu_ticks(pid);
  ck_assert_msg(t2 - t1 <= 5,
                "an idle broker used %ld ticks of CPU time in a second",
                t2 - t1);
  close(c.channel);
  stop(&f);
}
END_TEST

/* ---- how the broker starts ----------------------------------------------- */

/* argv[0] of a process (readable for any process, undumpable or not). */
static char *argv0_of(pid_t pid) {
  g_autofree char *path = g_strdup_printf("/proc/%d/cmdline", (int)pid);
  char *text = NULL;
  return g_file_get_contents(path, &text, NULL, NULL) ? text : NULL;
}

/* Starts a broker, opens the good file through it, and says how the broker
 * runs: 1 from the embedded program, 2 as a fork, 0 when it failed. */
static int start_and_use(void *arg) {
  const broker_test_tree *t = arg;
  sbx_allowlist *list = broker_test_tree_allowlist(t, "worker");
  const sbx_allowlist *lists[] = {list};
  sbx_broker_config cfg = {
      .allowlists = lists, .n_allowlists = 1, .audit_fd = -1};
  sbx_broker *b = sbx_broker_start(&cfg, NULL);
  if (!b)
    return 10;
  int ch = sbx_broker_connect(b, "worker", NULL);
  if (ch < 0)
    return 11;
  sbx_broker_client c;
  sbx_broker_client_init(&c, ch);
  int fd = sbx_broker_open(&c, t->good_file, O_RDONLY | O_CLOEXEC, 0);
  if (fd < 0)
    return 12;
  close(fd);
  g_autofree char *argv0 = argv0_of(sbx_broker_pid(b));
  if (!argv0)
    return 13;
  int how = strcmp(argv0, "sbx-broker") == 0 ? 1 : 2;
  close(ch);
  sbx_broker_stop(b, NULL, NULL);
  sbx_allowlist_free(list);
  return how;
}

static bool write_text(const char *path, const char *text) {
  return g_file_set_contents_full(path, text, -1, G_FILE_SET_CONTENTS_NONE,
                                  0644, NULL);
}

/* In a pid namespace of its own (vm.memfd_noexec is per pid namespace),
 * with memory files forbidden to execute. */
static int start_where_memfd_cannot_exec(void *arg) {
  uid_t uid = geteuid();
  gid_t gid = getegid();
  if (unshare(CLONE_NEWUSER | CLONE_NEWPID) != 0)
    return 20;
  char map[64];
  g_snprintf(map, sizeof map, "0 %u 1", (unsigned)uid);
  if (!write_text("/proc/self/setgroups", "deny") ||
      !write_text("/proc/self/uid_map", map))
    return 21;
  g_snprintf(map, sizeof map, "0 %u 1", (unsigned)gid);
  if (!write_text("/proc/self/gid_map", map))
    return 22;
  pid_t child = fork();
  if (child < 0)
    return 23;
  if (child == 0) {
    int fd = open("/proc/sys/vm/memfd_noexec", O_WRONLY | O_CLOEXEC);
    if (fd < 0 || write(fd, "2", 1) != 1)
      _exit(24);
    close(fd);
    _exit(start_and_use(arg));
  }
  int st;
  if (waitpid(child, &st, 0) != child || !WIFEXITED(st))
    return 25;
  return WEXITSTATUS(st);
}

START_TEST(
    the_broker_runs_the_embedded_program_or_a_fork_where_exec_is_refused) {
  broker_test_tree t;
  broker_test_tree_make(&t);
  /* A program of its own, from a sealed memory file. */
  ck_assert_int_eq(broker_test_run_in_child(start_and_use, &t), 1);
  /* Only global root may set vm.memfd_noexec, even in its own namespace. */
  if (geteuid() == 0) {
    int how = broker_test_run_in_child(start_where_memfd_cannot_exec, &t);
    ck_assert_msg(how == 2, "broker where memfd exec is refused: %d", how);
  }
  broker_test_tree_free(&t);
}
END_TEST

int main(void) {
  umask(022);
  Suite *s = suite_create("broker_faults");
  TCase *tc = tcase_create("sandbox");
  tcase_set_timeout(tc, 20);
  tcase_add_test(tc, broker_runs_under_its_own_seccomp_filter);
  tcase_add_test(tc, broker_sandbox_enforces_landlock_and_its_filter);
  tcase_add_test(tc, broker_serves_every_command_and_audits_under_its_filter);
  tcase_add_test(
      tc, broker_writes_its_audit_log_to_every_kind_of_sink_under_its_filter);
  suite_add_tcase(s, tc);
  TCase *control = tcase_create("control");
  tcase_set_timeout(control, 30);
  tcase_add_test(
      control,
      a_stopped_broker_fails_control_calls_in_time_and_late_replies_are_skipped);
  tcase_add_test(control, a_stopped_broker_is_killed_by_stop_within_the_bound);
  tcase_add_test(
      control,
      the_broker_runs_the_embedded_program_or_a_fork_where_exec_is_refused);
  suite_add_tcase(s, control);
  TCase *faults = tcase_create("faults");
  tcase_set_timeout(faults, 30);
  tcase_add_test(faults, broker_refuses_access_modes_and_fields_out_of_range);
  tcase_add_test(faults, broker_out_of_descriptors_fails_cleanly_and_recovers);
  tcase_add_test(faults,
                 broker_serves_others_while_one_worker_floods_and_never_reads);
  tcase_add_test(
      faults, a_worker_flooding_from_many_threads_gets_one_turn_like_any_other);
  tcase_add_test(faults,
                 broker_proc_self_means_the_worker_and_magic_links_stay_shut);
  suite_add_tcase(s, faults);
  TCase *waiting = tcase_create("waiting");
  tcase_set_timeout(waiting, 30);
  tcase_add_test(waiting,
                 a_reply_is_taken_whether_it_comes_while_polling_or_after);
  tcase_add_test(waiting, a_child_forked_while_its_parent_polled_still_polls);
  tcase_add_test(waiting, an_idle_broker_sleeps_after_polling_briefly);
  suite_add_tcase(s, waiting);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_ENV);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
