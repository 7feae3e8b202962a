/* The fork server: real zygotes in new namespaces, real workers, real
 * filters. Each test starts its own zygote inside Check's forked child.
 * Covers the protocol (pids as the host sees them, payloads, descriptors,
 * exit statuses), the worker's start (only its own fds, the self-pid
 * patch, layer ordering and stacking), F2 (zygote and host death), F3
 * (the policy-kill report) and a zygote that stops answering (spawn fails
 * within SBX_ZYGOTE_REPLY_TIMEOUT_MS). */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include "sandbox/kernel/namespaces/fds.h"
#include "sandbox/zygote/code_pages.h"
#include "sandbox/zygote/zygote.h"

/* ---- Helpers ------------------------------------------------------------ */

static sbx_zygote *start(const sbx_zygote_type *types, size_t n) {
  sbx_zygote_config config = {.types = types, .n_types = n};
  sbx_zygote *z = NULL;
  GError *error = NULL;
  if (!sbx_zygote_start(&config, &z, &error))
    ck_abort_msg("sbx_zygote_start: %s", error->message);
  return z;
}

static pid_t spawn(sbx_zygote *z, const char *type, const void *payload,
                   size_t len, const int *fds, size_t n_fds) {
  sbx_zygote_spawn_request req = {
      .process_type = type,
      .payload = payload,
      .payload_len = len,
      .fds = fds,
      .n_fds = n_fds,
      .broker_channel = -1,
  };
  pid_t pid = -1;
  GError *error = NULL;
  if (!sbx_zygote_spawn(z, &req, &pid, &error))
    ck_abort_msg("sbx_zygote_spawn: %s", error->message);
  ck_assert_int_gt(pid, 0);
  return pid;
}

static sbx_zygote_exit wait_worker(sbx_zygote *z, pid_t pid) {
  sbx_zygote_exit e;
  GError *error = NULL;
  if (!sbx_zygote_wait(z, pid, 20000, &e, &error))
    ck_abort_msg("sbx_zygote_wait: %s", error->message);
  return e;
}

static void write_all(int fd, const void *buf, size_t len) {
  const char *p = buf;
  while (len) {
    ssize_t n = write(fd, p, len);
    if (n <= 0)
      _exit(90);
    p += n;
    len -= (size_t)n;
  }
}

static size_t read_all(int fd, void *buf, size_t cap) {
  size_t got = 0;
  while (got < cap) {
    ssize_t n = read(fd, (char *)buf + got, cap - got);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    got += (size_t)n;
  }
  return got;
}

/* A program: arch check, then `nr` gets `action`, everything else is
 * allowed. */
static sbx_bpf_program one_rule(int nr, uint32_t action) {
  struct sock_filter insns[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)nr, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, action),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  sbx_bpf_program p = {.insns = g_memdup2(insns, sizeof insns),
                       .len = G_N_ELEMENTS(insns)};
  return p;
}

/* kill(arg0 == own pid) allowed, any other kill EPERM; instruction 7 is
 * the relocation. */
static sbx_bpf_program kill_self_only(void) {
  struct sock_filter insns[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_kill, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
               offsetof(struct seccomp_data, args[0])),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SBX_BPF_SELF_PID_UNPATCHED, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
  };
  static const uint32_t relocs[] = {7};
  sbx_bpf_program p = {.insns = g_memdup2(insns, sizeof insns),
                       .len = G_N_ELEMENTS(insns),
                       .self_pid_relocs = g_memdup2(relocs, sizeof relocs),
                       .n_self_pid_relocs = 1};
  return p;
}

static int nspid_of(pid_t host_pid, pid_t *ppid) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/status", (int)host_pid);
  FILE *f = fopen(path, "r");
  if (!f)
    return -1;
  char line[256];
  int inner = -1;
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, "NSpid:", 6) == 0) {
      char *last = strrchr(line, '\t');
      inner = last ? atoi(last + 1) : -1;
    } else if (strncmp(line, "PPid:", 5) == 0) {
      *ppid = atoi(line + 5);
    }
  }
  fclose(f);
  return inner;
}

/* ---- Entry functions ----------------------------------------------------- */

/* Writes getpid() to fd 3, then waits for a byte on fd 4. */
static int entry_report_pid(const sbx_zygote_worker *args) {
  pid_t self = getpid();
  write_all(3, &self, sizeof self);
  char c;
  if (read(4, &c, 1) != 1)
    return 3;
  return 0;
}

/* Echoes the payload to fd 3, then the number of fds it got and the
 * process type's name. */
static int entry_echo(const sbx_zygote_worker *args) {
  write_all(3, args->payload, args->payload_len);
  int n = args->n_fds;
  write_all(3, &n, sizeof n);
  write_all(3, args->process_type, strlen(args->process_type));
  return 0;
}

/* Exits with the first payload byte; 255 means "raise SIGTERM". */
static int entry_exit_code(const sbx_zygote_worker *args) {
  unsigned char code =
      args->payload_len ? *(const unsigned char *)args->payload : 0;
  if (code == 255)
    raise(SIGTERM);
  return code;
}

/* Lists every open descriptor to fd 3: count, then numbers, then each one's
 * file type (S_IFMT bits). Also the broker and report fd numbers. */
static int entry_list_fds(const sbx_zygote_worker *args) {
  int fds[256];
  int n = sbx_fd_list_open_raw(fds, 256);
  int modes[256];
  for (int i = 0; i < n && i < 256; i++) {
    struct stat st;
    modes[i] = fstat(fds[i], &st) == 0 ? (int)(st.st_mode & S_IFMT) : -1;
  }
  write_all(3, &n, sizeof n);
  write_all(3, fds, sizeof(int) * (size_t)n);
  write_all(3, modes, sizeof(int) * (size_t)n);
  write_all(3, &args->report_fd, sizeof(int));
  write_all(3, &args->broker_fd, sizeof(int));
  return 0;
}

static int entry_pause(const sbx_zygote_worker *args) {
  for (;;)
    pause();
  return 0;
}

/* getpriority(0x11, 0x22): trapped by the test's layer. */
static int entry_trapped_call(const sbx_zygote_worker *args) {
  syscall(__NR_getpriority, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66);
  return 0;
}

/* kill(self) and kill(zygote) with signal 0: results to fd 3. */
static int entry_kill_targets(const sbx_zygote_worker *args) {
  int results[2];
  results[0] = kill(getpid(), 0) == 0 ? 0 : errno;
  results[1] = kill(getppid(), 0) == 0 ? 0 : errno;
  write_all(3, results, sizeof results);
  return 0;
}

/* getppid() result and errno to fd 3, for layer-stacking tests. */
static int entry_getppid(const sbx_zygote_worker *args) {
  long r = syscall(__NR_getppid);
  int out[2] = {(int)r, r < 0 ? errno : 0};
  write_all(3, out, sizeof out);
  return 0;
}

static int entry_status(const sbx_zygote_worker *args) {
  if (!args->status)
    return 10;
  write_all(3, args->status, sizeof *args->status);
  return 0;
}

/* ---- Tests ------------------------------------------------------------- */

START_TEST(zygote_reports_worker_pid_as_host_sees_it) {
  sbx_zygote_type t = {.name = "t", .entry = entry_report_pid};
  sbx_zygote *z = start(&t, 1);
  int out[2], hold[2];
  ck_assert_int_eq(pipe(out), 0);
  ck_assert_int_eq(pipe(hold), 0);
  int fds[] = {0, 1, 2, out[1], hold[0]};
  pid_t pid = spawn(z, "t", NULL, 0, fds, 5);
  close(out[1]);
  close(hold[0]);
  pid_t inner = -1;
  ck_assert_uint_eq(read_all(out[0], &inner, sizeof inner), sizeof inner);
  /* The host's /proc agrees: the same process, one level down, a child of
   * the zygote. */
  pid_t ppid = -1;
  ck_assert_int_eq(nspid_of(pid, &ppid), inner);
  ck_assert_int_ne(inner, pid);
  ck_assert_int_eq(ppid, sbx_zygote_pid(z));
  ck_assert_int_eq(write(hold[1], "x", 1), 1);
  sbx_zygote_exit e = wait_worker(z, pid);
  ck_assert_int_eq(e.pid, pid);
  ck_assert_int_eq(e.reason, SBX_ZYGOTE_EXIT_NORMAL);
  ck_assert_int_eq(e.exit_code, 0);
  sbx_zygote_stop(z);
}
END_TEST

START_TEST(zygote_delivers_payload_descriptors_and_type) {
  sbx_zygote_type t[] = {{.name = "first", .entry = entry_exit_code},
                         {.name = "echo", .entry = entry_echo}};
  sbx_zygote *z = start(t, 2);
  int out[2];
  ck_assert_int_eq(pipe(out), 0);
  static char payload[60000];
  for (size_t i = 0; i < sizeof payload; i++)
    payload[i] = (char)(i * 7);
  int fds[] = {0, 1, 2, out[1]};
  pid_t pid = spawn(z, "echo", payload, sizeof payload, fds, 4);
  close(out[1]);
  static char got[sizeof payload + 64];
  size_t n = read_all(out[0], got, sizeof got);
  ck_assert_uint_eq(n, sizeof payload + sizeof(int) + 4);
  ck_assert_int_eq(memcmp(got, payload, sizeof payload), 0);
  int n_fds;
  memcpy(&n_fds, got + sizeof payload, sizeof n_fds);
  ck_assert_int_eq(n_fds, 4);
  ck_assert_int_eq(memcmp(got + sizeof payload + sizeof(int), "echo", 4), 0);
  ck_assert_int_eq(wait_worker(z, pid).reason, SBX_ZYGOTE_EXIT_NORMAL);
  sbx_zygote_stop(z);
}
END_TEST

START_TEST(zygote_reports_exit_codes_and_signals) {
  sbx_zygote_type t = {.name = "t", .entry = entry_exit_code};
  sbx_zygote *z = start(&t, 1);
  unsigned char seven = 7, segv = 255;
  pid_t a = spawn(z, "t", &seven, 1, NULL, 0);
  pid_t b = spawn(z, "t", &segv, 1, NULL, 0);
  sbx_zygote_exit eb = wait_worker(z, b);
  sbx_zygote_exit ea = wait_worker(z, a);
  ck_assert_int_eq(ea.reason, SBX_ZYGOTE_EXIT_NORMAL);
  ck_assert_int_eq(ea.exit_code, 7);
  ck_assert_int_eq(eb.reason, SBX_ZYGOTE_EXIT_SIGNALED);
  ck_assert_int_eq(eb.signal, SIGTERM);
  ck_assert_ptr_nonnull(strstr(eb.detail, "signal 15"));
  sbx_zygote_status st;
  ck_assert(sbx_zygote_query(z, &st, NULL));
  ck_assert_int_eq(st.live, 0);
  ck_assert_int_eq(st.spawned, 2);
  ck_assert_int_eq(st.exited, 2);
  sbx_zygote_stop(z);
}
END_TEST

/* S29: every number up to the limit is checked. */
START_TEST(worker_starts_with_only_the_descriptors_it_was_given) {
  sbx_zygote_type t = {.name = "t", .entry = entry_list_fds};
  sbx_zygote *z = start(&t, 1);
  /* Noise the host holds: a directory, a socket, a pipe. None may leak. */
  int dir = open("/", O_RDONLY | O_DIRECTORY);
  int sv[2];
  ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  int out[2];
  int n = 0;
  ck_assert_int_eq(pipe(out), 0);
  int fds4[] = {0, 1, 2, out[1]};
  pid_t pid = spawn(z, "t", NULL, 0, fds4, 4);
  close(out[1]);
  ck_assert_uint_eq(read_all(out[0], &n, sizeof n), sizeof n);
  ck_assert_int_eq(n, 5);
  int open_fds[5], modes[5], report_fd, broker_fd;
  ck_assert_uint_eq(read_all(out[0], open_fds, sizeof open_fds),
                    sizeof open_fds);
  ck_assert_uint_eq(read_all(out[0], modes, sizeof modes), sizeof modes);
  ck_assert_uint_eq(read_all(out[0], &report_fd, sizeof report_fd),
                    sizeof report_fd);
  ck_assert_uint_eq(read_all(out[0], &broker_fd, sizeof broker_fd),
                    sizeof broker_fd);
  for (int i = 0; i < 5; i++)
    ck_assert_int_eq(open_fds[i], i);
  ck_assert_int_eq(report_fd, 4);
  ck_assert_int_eq(broker_fd, -1);
  ck_assert_int_eq(modes[3], S_IFIFO); /* the pipe the host gave */
  ck_assert_int_eq(modes[4], S_IFIFO); /* the report pipe */
  for (int i = 0; i < 5; i++) {
    ck_assert_int_ne(modes[i], S_IFDIR);
    ck_assert_int_ne(modes[i], S_IFSOCK);
  }
  ck_assert_int_eq(wait_worker(z, pid).reason, SBX_ZYGOTE_EXIT_NORMAL);
  close(dir);
  close(sv[0]);
  close(sv[1]);
  sbx_zygote_stop(z);
}
END_TEST

/* F2: the zygote dies; the host is told and no worker survives. */
START_TEST(zygote_death_kills_every_worker_and_the_host_is_told) {
  sbx_zygote_type t = {.name = "t", .entry = entry_pause};
  sbx_zygote *z = start(&t, 1);
  pid_t w[3];
  for (int i = 0; i < 3; i++)
    w[i] = spawn(z, "t", NULL, 0, NULL, 0);
  /* Positive control: they run. */
  for (int i = 0; i < 3; i++)
    ck_assert_int_eq(kill(w[i], 0), 0);
  ck_assert_int_eq(kill(sbx_zygote_pid(z), SIGKILL), 0);
  bool seen[3] = {false, false, false};
  for (int k = 0; k < 3; k++) {
    sbx_zygote_exit e = wait_worker(z, -1);
    ck_assert_int_eq(e.reason, SBX_ZYGOTE_EXIT_ZYGOTE_DIED);
    for (int i = 0; i < 3; i++)
      if (e.pid == w[i])
        seen[i] = true;
  }
  for (int i = 0; i < 3; i++) {
    ck_assert(seen[i]);
    errno = 0;
    ck_assert_int_eq(kill(w[i], 0), -1);
    ck_assert_int_eq(errno, ESRCH);
  }
  sbx_zygote_exit e;
  GError *error = NULL;
  ck_assert(!sbx_zygote_wait(z, -1, 0, &e, &error));
  ck_assert(g_error_matches(error, SBX_ZYGOTE_ERROR, SBX_ZYGOTE_ERROR_DIED));
  g_error_free(error);
  sbx_zygote_stop(z);
}
END_TEST

/* A stopped zygote: the spawn fails within the bound, naming what timed
 * out; when the zygote wakes up and forks that worker after all, the host
 * kills it (its caller was told the spawn failed) and never reports it. */
START_TEST(a_spawn_answered_after_its_timeout_kills_that_worker) {
  sbx_zygote_type t = {.name = "t", .entry = entry_pause};
  sbx_zygote *z = start(&t, 1);
  /* Control: a spawn answered in time lives. */
  pid_t kept = spawn(z, "t", NULL, 0, NULL, 0);
  ck_assert_int_eq(kill(kept, 0), 0);

  pid_t zygote = sbx_zygote_pid(z);
  ck_assert_int_eq(kill(zygote, SIGSTOP), 0);
  sbx_zygote_spawn_request req = {.process_type = "t", .broker_channel = -1};
  pid_t pid = -1;
  GError *error = NULL;
  gint64 t0 = g_get_monotonic_time() / 1000;
  ck_assert(!sbx_zygote_spawn(z, &req, &pid, &error));
  gint64 waited = g_get_monotonic_time() / 1000 - t0;
  ck_assert_msg(
      g_error_matches(error, SBX_ZYGOTE_ERROR, SBX_ZYGOTE_ERROR_FAILED) &&
          strstr(error->message, "spawn request within 5000 ms"),
      "%s", error ? error->message : "no error");
  g_clear_error(&error);
  ck_assert_int_ge(waited, SBX_ZYGOTE_REPLY_TIMEOUT_MS - 100);
  ck_assert_int_lt(waited, SBX_ZYGOTE_REPLY_TIMEOUT_MS + 3000);

  ck_assert_int_eq(kill(zygote, SIGCONT), 0);
  sbx_zygote_status st = {0};
  for (int i = 0; i < 500; i++) {
    if (!sbx_zygote_query(z, &st, &error))
      ck_abort_msg("sbx_zygote_query: %s", error->message);
    if (st.spawned == 2 && st.live == 1)
      break;
    g_usleep(10000);
  }
  ck_assert_uint_eq(st.spawned, 2); /* the late worker did start */
  ck_assert_uint_eq(st.live, 1);    /* and only the control is left */
  ck_assert_int_eq(kill(kept, 0), 0);

  ck_assert_int_eq(kill(kept, SIGKILL), 0);
  sbx_zygote_exit e = wait_worker(z, -1);
  ck_assert_int_eq(e.pid, kept);
  ck_assert(!sbx_zygote_wait(z, -1, 0, &e, &error));
  ck_assert(g_error_matches(error, SBX_ZYGOTE_ERROR, SBX_ZYGOTE_ERROR_INVALID));
  g_error_free(error);
  sbx_zygote_stop(z);
}
END_TEST

/* F2, the other way round: the host dies, and the zygote and its workers
 * follow (parent-death signal, then pid namespace teardown). */
START_TEST(host_death_takes_the_zygote_and_its_workers) {
  ck_assert_int_eq(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  int info[2];
  ck_assert_int_eq(pipe(info), 0);
  pid_t host = fork();
  ck_assert_int_ge(host, 0);
  if (host == 0) {
    close(info[0]);
    sbx_zygote_type t = {.name = "t", .entry = entry_pause};
    sbx_zygote_config config = {.types = &t, .n_types = 1};
    sbx_zygote *z = NULL;
    if (!sbx_zygote_start(&config, &z, NULL))
      _exit(1);
    sbx_zygote_spawn_request req = {.process_type = "t", .broker_channel = -1};
    pid_t pids[2];
    pids[0] = sbx_zygote_pid(z);
    if (!sbx_zygote_spawn(z, &req, &pids[1], NULL))
      _exit(2);
    write_all(info[1], pids, sizeof pids);
    for (;;)
      pause();
  }
  close(info[1]);
  pid_t pids[2];
  ck_assert_uint_eq(read_all(info[0], pids, sizeof pids), sizeof pids);
  ck_assert_int_eq(kill(pids[1], 0), 0); /* positive control */
  ck_assert_int_eq(kill(host, SIGKILL), 0);
  ck_assert_int_eq(waitpid(host, NULL, 0), host);
  /* We are the subreaper: the orphaned zygote is our child now, and it
   * becomes reapable only after its namespace is empty. */
  /* Whichever comes first ends it: the parent-death SIGKILL, or EOF on its
   * socket to the host. */
  int status;
  ck_assert_int_eq(waitpid(pids[0], &status, 0), pids[0]);
  errno = 0;
  ck_assert_int_eq(kill(pids[1], 0), -1);
  ck_assert_int_eq(errno, ESRCH);
}
END_TEST

static void *idle_thread(void *arg) {
  pause();
  return arg;
}

START_TEST(zygote_refuses_to_start_from_a_threaded_host) {
  pthread_t th;
  ck_assert_int_eq(pthread_create(&th, NULL, idle_thread, NULL), 0);
  sbx_zygote_type t = {.name = "t", .entry = entry_pause};
  sbx_zygote_config config = {.types = &t, .n_types = 1};
  sbx_zygote *z = NULL;
  GError *error = NULL;
  ck_assert(!sbx_zygote_start(&config, &z, &error));
  ck_assert_ptr_null(z);
  ck_assert_ptr_nonnull(strstr(error->message, "2 threads"));
  g_error_free(error);
}
END_TEST

START_TEST(zygote_refuses_bad_spawn_requests) {
  sbx_zygote_type t = {.name = "t", .entry = entry_pause};
  sbx_zygote *z = start(&t, 1);
  GError *error = NULL;
  pid_t pid;
  sbx_zygote_spawn_request req = {.process_type = "nope", .broker_channel = -1};
  ck_assert(!sbx_zygote_spawn(z, &req, &pid, &error));
  ck_assert_ptr_nonnull(strstr(error->message, "unknown process type"));
  g_clear_error(&error);
  int fds[SBX_ZYGOTE_MAX_FDS + 1] = {0};
  req = (sbx_zygote_spawn_request){.process_type = "t",
                                   .fds = fds,
                                   .n_fds = SBX_ZYGOTE_MAX_FDS + 1,
                                   .broker_channel = -1};
  ck_assert(!sbx_zygote_spawn(z, &req, &pid, &error));
  ck_assert_msg(strstr(error->message, "at most"), "%s", error->message);
  g_clear_error(&error);
  /* A NULL array with a count is reported as NULL, not as too large, even
   * when the count is also over the limit. */
  const size_t counts[] = {1, SBX_ZYGOTE_MAX_FDS + 1};
  for (size_t i = 0; i < G_N_ELEMENTS(counts); i++) {
    req = (sbx_zygote_spawn_request){
        .process_type = "t", .n_fds = counts[i], .broker_channel = -1};
    ck_assert(!sbx_zygote_spawn(z, &req, &pid, &error));
    ck_assert_msg(strstr(error->message, "fds is NULL") &&
                      !strstr(error->message, "at most"),
                  "%s", error->message);
    g_clear_error(&error);
  }
  const size_t lens[] = {1, SBX_ZYGOTE_MAX_PAYLOAD + 1};
  for (size_t i = 0; i < G_N_ELEMENTS(lens); i++) {
    req = (sbx_zygote_spawn_request){
        .process_type = "t", .payload_len = lens[i], .broker_channel = -1};
    ck_assert(!sbx_zygote_spawn(z, &req, &pid, &error));
    ck_assert_msg(strstr(error->message, "payload is NULL") &&
                      !strstr(error->message, "at most"),
                  "%s", error->message);
    g_clear_error(&error);
  }
  static char big[SBX_ZYGOTE_MAX_PAYLOAD + 1];
  req = (sbx_zygote_spawn_request){.process_type = "t",
                                   .payload = big,
                                   .payload_len = sizeof big,
                                   .broker_channel = -1};
  ck_assert(!sbx_zygote_spawn(z, &req, &pid, &error));
  ck_assert_msg(strstr(error->message, "at most"), "%s", error->message);
  g_clear_error(&error);
  req = (sbx_zygote_spawn_request){.process_type = "t", .broker_channel = 0};
  ck_assert(!sbx_zygote_spawn(z, &req, &pid, &error));
  ck_assert_ptr_nonnull(strstr(error->message, "does not use the broker"));
  g_clear_error(&error);
  /* The zygote still serves. */
  sbx_zygote_status st;
  ck_assert(sbx_zygote_query(z, &st, NULL));
  ck_assert_int_eq(st.spawned, 0);
  sbx_zygote_stop(z);
}
END_TEST

/* F3: the host learns the refused call and its arguments. */
START_TEST(zygote_reports_the_syscall_and_arguments_of_a_policy_kill) {
  sbx_bpf_program layer = one_rule(__NR_getpriority, SECCOMP_RET_TRAP);
  const char *names[] = {"test-layer"};
  sbx_zygote_type t = {.name = "t",
                       .entry = entry_trapped_call,
                       .layers = &layer,
                       .layer_names = names,
                       .n_layers = 1};
  sbx_zygote *z = start(&t, 1);
  pid_t pid = spawn(z, "t", NULL, 0, NULL, 0);
  sbx_zygote_exit e = wait_worker(z, pid);
  ck_assert_int_eq(e.reason, SBX_ZYGOTE_EXIT_POLICY_KILL);
  ck_assert_int_eq(e.signal, SIGSYS);
  ck_assert_int_eq(e.syscall_nr, __NR_getpriority);
  ck_assert_uint_eq(e.syscall_args[0], 0x11);
  ck_assert_uint_eq(e.syscall_args[1], 0x22);
  ck_assert_uint_eq(e.syscall_args[5], 0x66);
  ck_assert_ptr_nonnull(strstr(e.detail, "getpriority(140)"));
  g_free(layer.insns);
  sbx_zygote_stop(z);
}
END_TEST

/* Positive control for the test above: without the layer the call runs. */
START_TEST(worker_without_the_layer_runs_the_same_call) {
  sbx_zygote_type t = {.name = "t", .entry = entry_trapped_call};
  sbx_zygote *z = start(&t, 1);
  pid_t pid = spawn(z, "t", NULL, 0, NULL, 0);
  sbx_zygote_exit e = wait_worker(z, pid);
  ck_assert_int_eq(e.reason, SBX_ZYGOTE_EXIT_NORMAL);
  sbx_zygote_stop(z);
}
END_TEST

START_TEST(zygote_reports_a_layer_that_cannot_be_installed) {
  struct sock_filter bad[] = {BPF_STMT(0xffff, 0)};
  sbx_bpf_program layer = {.insns = bad, .len = 1};
  sbx_zygote_type t = {
      .name = "t", .entry = entry_pause, .layers = &layer, .n_layers = 1};
  sbx_zygote *z = start(&t, 1);
  pid_t pid = spawn(z, "t", NULL, 0, NULL, 0);
  sbx_zygote_exit e = wait_worker(z, pid);
  ck_assert_int_eq(e.reason, SBX_ZYGOTE_EXIT_SETUP_FAILED);
  ck_assert_ptr_nonnull(strstr(e.detail, "seccomp filter 0"));
  sbx_zygote_stop(z);
}
END_TEST

/* S19's mechanism: the placeholder becomes each worker's own pid. */
START_TEST(each_worker_may_signal_itself_and_nobody_else) {
  sbx_bpf_program layer = kill_self_only();
  sbx_zygote_type t = {.name = "t",
                       .entry = entry_kill_targets,
                       .layers = &layer,
                       .n_layers = 1};
  sbx_zygote *z = start(&t, 1);
  for (int round = 0; round < 2; round++) {
    int out[2];
    ck_assert_int_eq(pipe(out), 0);
    int fds[] = {0, 1, 2, out[1]};
    pid_t pid = spawn(z, "t", NULL, 0, fds, 4);
    close(out[1]);
    int results[2];
    ck_assert_uint_eq(read_all(out[0], results, sizeof results),
                      sizeof results);
    close(out[0]);
    ck_assert_int_eq(results[0], 0);     /* itself */
    ck_assert_int_eq(results[1], EPERM); /* the zygote */
    ck_assert_int_eq(wait_worker(z, pid).reason, SBX_ZYGOTE_EXIT_NORMAL);
  }
  g_free(layer.insns);
  sbx_zygote_stop(z);
}
END_TEST

/* Stacked layers only narrow, whichever is installed first. */
static void check_stacking(uint32_t first, uint32_t second, int want_ret,
                           int want_errno) {
  sbx_bpf_program layers[2] = {one_rule(__NR_getppid, first),
                               one_rule(__NR_getppid, second)};
  sbx_zygote_type t = {
      .name = "t", .entry = entry_getppid, .layers = layers, .n_layers = 2};
  sbx_zygote *z = start(&t, 1);
  int out[2];
  ck_assert_int_eq(pipe(out), 0);
  int fds[] = {0, 1, 2, out[1]};
  pid_t pid = spawn(z, "t", NULL, 0, fds, 4);
  close(out[1]);
  int got[2];
  ck_assert_uint_eq(read_all(out[0], got, sizeof got), sizeof got);
  ck_assert_int_eq(got[0], want_ret);
  ck_assert_int_eq(got[1], want_errno);
  ck_assert_int_eq(wait_worker(z, pid).reason, SBX_ZYGOTE_EXIT_NORMAL);
  g_free(layers[0].insns);
  g_free(layers[1].insns);
  sbx_zygote_stop(z);
}

START_TEST(stacked_layers_only_narrow_in_either_order) {
  /* Positive control: allowed by both, getppid() is the zygote, pid 1. */
  check_stacking(SECCOMP_RET_ALLOW, SECCOMP_RET_ALLOW, 1, 0);
  check_stacking(SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO | EPERM, -1, EPERM);
  check_stacking(SECCOMP_RET_ERRNO | EPERM, SECCOMP_RET_ALLOW, -1, EPERM);
}
END_TEST

START_TEST(worker_status_reports_every_layer_from_the_kernel) {
  sbx_bpf_program layer = one_rule(__NR_getpriority, SECCOMP_RET_TRAP);
  const char *names[] = {"test-layer"};
  sbx_zygote_type t = {.name = "statusy",
                       .entry = entry_status,
                       .layers = &layer,
                       .layer_names = names,
                       .n_layers = 1,
                       .landlock = true,
                       .collect_status = true};
  sbx_zygote *z = start(&t, 1);
  int out[2];
  ck_assert_int_eq(pipe(out), 0);
  int fds[] = {0, 1, 2, out[1]};
  pid_t pid = spawn(z, "statusy", NULL, 0, fds, 4);
  close(out[1]);
  sbx_process_status st;
  ck_assert_uint_eq(read_all(out[0], &st, sizeof st), sizeof st);
  ck_assert_int_eq(wait_worker(z, pid).reason, SBX_ZYGOTE_EXIT_NORMAL);
  ck_assert_str_eq(st.process_type, "statusy");
  for (int i = 0; i < 4; i++) /* user, pid, net, ipc */
    ck_assert_int_eq(st.kernel.ns[i], SBX_TRI_YES);
  ck_assert_int_eq(st.kernel.root_replaced, SBX_TRI_YES);
  ck_assert_int_eq(st.kernel.caps_empty, SBX_TRI_YES);
  ck_assert_int_eq(st.kernel.no_new_privs, SBX_TRI_YES);
  ck_assert_int_eq(st.kernel.dumpable, SBX_TRI_NO);
  ck_assert_int_eq(st.kernel.new_session, SBX_TRI_YES);
  ck_assert_int_eq(st.kernel.seccomp_mode, 2);
  ck_assert_int_eq(st.kernel.seccomp_filters, 1);
  ck_assert_uint_eq(st.n_filters, 1);
  ck_assert_str_eq(st.filters[0], "test-layer");
  ck_assert(!st.broker);
  ck_assert_int_eq(st.kernel.landlock, SBX_TRI_YES);
  ck_assert_int_ge(st.kernel.landlock_abi, 1);
  ck_assert_int_eq(st.kernel.open_fds, 5);
  ck_assert(st.fully_sandboxed);
  g_free(layer.insns);
  sbx_zygote_stop(z);
}
END_TEST

/* 1 when the page at addr is in this process's page tables, 0 when not,
 * -1 when /proc/self/pagemap cannot be read. For forked children too. */
static int page_present(const void *addr) {
  int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  uint64_t entry = 0;
  off_t at = (off_t)((uintptr_t)addr / (uintptr_t)getpagesize()) * 8;
  ssize_t n = pread(fd, &entry, sizeof(entry), at);
  close(fd);
  return n == sizeof(entry) ? (int)(entry >> 63) : -1;
}

static bool in_a_range(const sbx_code_ranges *r, uintptr_t from, uintptr_t to) {
  for (size_t i = 0; i < r->n; i++) {
    if (r->range[i].start <= from && to <= r->range[i].end)
      return true;
  }
  return false;
}

/* Pooled workers map the zygote's code in before they wait for a job
 * (code_pages.h): the ranges read are this process's executable mappings
 * and no others, and populating them puts back in a child's page tables
 * the pages of a file mapping that the fork left out. */
START_TEST(code_ranges_are_the_executable_mappings_and_a_child_maps_them_in) {
  size_t page = (size_t)getpagesize(), len = 4 * page;
  int fd = open("/bin/true", O_RDONLY | O_CLOEXEC);
  ck_assert_int_ge(fd, 0);
  const volatile char *code =
      mmap(NULL, len, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
  ck_assert(code != MAP_FAILED);
  close(fd);
  char *data = mmap(NULL, page, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ck_assert(data != MAP_FAILED);
  data[0] = 1;

  sbx_code_ranges r;
  ck_assert_int_eq(sbx_code_ranges_read_raw(&r), 0);
  ck_assert(in_a_range(&r, (uintptr_t)code, (uintptr_t)code + len));
  uintptr_t fn = (uintptr_t)page_present;
  ck_assert(in_a_range(&r, fn, fn + 1));
  ck_assert(!in_a_range(&r, (uintptr_t)data, (uintptr_t)data + 1));
  ck_assert_uint_le(r.bytes, SBX_CODE_BYTES_MAX);

  /* Control: the parent has the page; its fork does not. */
  (void)code[0];
  ck_assert_int_eq(page_present((const void *)code), 1);
  pid_t child = fork();
  ck_assert_int_ge(child, 0);
  if (child == 0) {
    if (page_present((const void *)code) != 0)
      _exit(2);
    sbx_code_ranges_populate_raw(&r);
    _exit(page_present((const void *)code) == 1 &&
                  page_present((const void *)(code + len - 1)) == 1
              ? 0
              : 3);
  }
  int status;
  ck_assert_int_eq(waitpid(child, &status, 0), child);
  ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                "child status %d (2: a fork kept the page, 3: not mapped in)",
                status);
  munmap((void *)code, len);
  munmap(data, page);
}
END_TEST

static Suite *zygote_suite(void) {
  Suite *s = suite_create("zygote");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 30);
  tcase_add_test(tc, zygote_reports_worker_pid_as_host_sees_it);
  tcase_add_test(tc, zygote_delivers_payload_descriptors_and_type);
  tcase_add_test(tc, zygote_reports_exit_codes_and_signals);
  tcase_add_test(tc, worker_starts_with_only_the_descriptors_it_was_given);
  tcase_add_test(tc, zygote_death_kills_every_worker_and_the_host_is_told);
  tcase_add_test(tc, host_death_takes_the_zygote_and_its_workers);
  tcase_add_test(tc, a_spawn_answered_after_its_timeout_kills_that_worker);
  tcase_add_test(tc, zygote_refuses_to_start_from_a_threaded_host);
  tcase_add_test(tc, zygote_refuses_bad_spawn_requests);
  tcase_add_test(tc, zygote_reports_the_syscall_and_arguments_of_a_policy_kill);
  tcase_add_test(tc, worker_without_the_layer_runs_the_same_call);
  tcase_add_test(tc, zygote_reports_a_layer_that_cannot_be_installed);
  tcase_add_test(tc, each_worker_may_signal_itself_and_nobody_else);
  tcase_add_test(tc, stacked_layers_only_narrow_in_either_order);
  tcase_add_test(tc, worker_status_reports_every_layer_from_the_kernel);
  tcase_add_test(
      tc, code_ranges_are_the_executable_mappings_and_a_child_maps_them_in);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(zygote_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
