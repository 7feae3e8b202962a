/* A program for sbx-run's tests to run inside (and, for the positive
 * controls, outside) the sandbox. Each subcommand tries one thing and
 * prints what happened as `key=value` lines on stdout; the exit status
 * says whether the attempt succeeded (0) or was refused (1).
 *
 * It is deliberately an ordinary program: libc only, no sbx code, built
 * without sanitizers (their runtimes read /proc/self/maps, which the
 * sandbox does not serve).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <arpa/inet.h>
#include <linux/capability.h>
#include <linux/fs.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

static int usage(void) {
  fprintf(
      stderr,
      "usage: sbx_run_probe race ALLOWED CANARY CANARY_INO N\n"
      "       sbx_run_probe read PATH | write PATH | mkdir PATH | mkfifo PATH\n"
      "       sbx_run_probe socket-inet | socketpair-dgram\n"
      "       sbx_run_probe connect-abstract NAME\n"
      "       sbx_run_probe creds | session | tiocsti | selfkill SIG\n"
      "       sbx_run_probe wait | env NAME\n"
      "  (TARGET: a PATH opened read-only, fd:N, a descriptor given, or "
      "memfd)\n"
      "       sbx_run_probe fchmod TARGET MODE | fchmodat-empty PATH MODE\n"
      "       sbx_run_probe futimens PATH SECONDS\n"
      "       sbx_run_probe fallocate TARGET LEN | ftruncate TARGET LEN\n"
      "       sbx_run_probe fsetxattr PATH NAME VALUE\n"
      "       sbx_run_probe fremovexattr PATH NAME\n"
      "       sbx_run_probe setxattr PATH NAME VALUE | removexattr PATH NAME\n"
      "       sbx_run_probe fchown PATH | setflags PATH\n"
      "       sbx_run_probe stat-cwd | chdir PATH\n"
      "       sbx_run_probe connect PATH | connect-tcp PORT | tcp-self PORT\n"
      "       sbx_run_probe connect-race ALLOWED CANARY N\n"
      "       sbx_run_probe fd-race PORT CANARY N\n"
      "       sbx_run_probe connect-tcp-slow PORT MARKER STATFILE\n"
      "       sbx_run_probe socket-unix-dgram | bind PATH [CHDIR]\n"
      "       sbx_run_probe opath PATH [NAME] | spawn-then-acct\n"
      "       sbx_run_probe watch DIR [LINK]\n"
      "       sbx_run_probe setids [change]\n"
      "       sbx_run_probe symlink TARGET LINK | link OLD NEW | exec PATH\n"
      "       sbx_run_probe link-connect TARGET LINK (symlink, then connect)\n"
      "       sbx_run_probe link-race INSIDE CANARY LINK N | job | pty\n"
      "       sbx_run_probe devtty | traceme | attach PID | dirforms DIR\n"
      "       sbx_run_probe fifo DIR\n");
  return 2;
}

static int more_commands(int argc, char **argv);

/* ---- S30: a thread flips the path while the main thread opens it ------ */

static char race_path[4096];
static char race_a[4096], race_b[4096];
static atomic_int race_stop;

static void *flipper(void *unused) {
  (void)unused;
  size_t la = strlen(race_a) + 1, lb = strlen(race_b) + 1;
  /* Each name stays a while, so an unsupervised open sees the canary's
   * name often enough for the control to show the flip is real. */
  while (!atomic_load_explicit(&race_stop, memory_order_relaxed)) {
    memcpy(race_path, race_b, lb);
    for (volatile int spin = 0; spin < 200; spin++) {
    }
    memcpy(race_path, race_a, la);
    for (volatile int spin = 0; spin < 200; spin++) {
    }
  }
  return NULL;
}

static int cmd_race(int argc, char **argv) {
  if (argc != 6)
    return usage();
  snprintf(race_a, sizeof(race_a), "%s", argv[2]);
  snprintf(race_b, sizeof(race_b), "%s", argv[3]);
  unsigned long long canary_ino = strtoull(argv[4], NULL, 10);
  long n = strtol(argv[5], NULL, 10);
  memcpy(race_path, race_a, strlen(race_a) + 1);
  pthread_t t;
  if (pthread_create(&t, NULL, flipper, NULL) != 0)
    return 2;
  long opened = 0, refused = 0, canary = 0, other = 0;
  for (long i = 0; i < n; i++) {
    int fd = open(race_path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      refused++;
      continue;
    }
    opened++;
    struct stat st;
    /* The raw fstat, not glibc's newfstatat(fd, ""): one notification
     * per iteration is enough. */
    if (syscall(SYS_fstat, fd, &st) == 0) {
      if ((unsigned long long)st.st_ino == canary_ino)
        canary++;
    } else {
      other++;
    }
    close(fd);
  }
  atomic_store(&race_stop, 1);
  pthread_join(t, NULL);
  printf("opened=%ld\nrefused=%ld\ncanary=%ld\nfstat_failed=%ld\n", opened,
         refused, canary, other);
  return canary == 0 ? 0 : 1;
}

/* ---- files -------------------------------------------------------------- */

static int report_errno(const char *what, int rc) {
  if (rc < 0) {
    printf("%s=%s\nerrno=%d\n", what, strerror(errno), errno);
    return 1;
  }
  printf("%s=ok\n", what);
  return 0;
}

static int cmd_read(const char *path) {
  int fd = open(path, O_RDONLY);
  if (fd < 0)
    return report_errno("read", -1);
  char buf[256];
  ssize_t n = read(fd, buf, sizeof(buf) - 1);
  close(fd);
  if (n < 0)
    return report_errno("read", -1);
  buf[n] = '\0';
  printf("read=ok\ndata=%s\n", buf);
  return 0;
}

static int cmd_write(const char *path) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0)
    return report_errno("write", -1);
  int rc = write(fd, "written\n", 8) == 8 ? 0 : -1;
  close(fd);
  return report_errno("write", rc);
}

static int cmd_mkdir(const char *path) {
  return report_errno("mkdir", mkdir(path, 0755));
}

static int cmd_mkfifo(const char *path) {
  return report_errno("mkfifo", mkfifo(path, 0644));
}

/* ---- sockets (S18) ------------------------------------------------------ */

static int cmd_socket_inet(void) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd >= 0)
    close(fd);
  return report_errno("socket", fd);
}

static int cmd_socketpair_dgram(void) {
  int sv[2];
  int rc = socketpair(AF_UNIX, SOCK_DGRAM, 0, sv);
  if (rc == 0) {
    close(sv[0]);
    close(sv[1]);
  }
  return report_errno("socketpair", rc);
}

static int cmd_connect_abstract(const char *name) {
  int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  if (fd < 0)
    return report_errno("connect", -1);
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  size_t len = strlen(name);
  if (len + 1 > sizeof(sa.sun_path))
    return 2;
  memcpy(sa.sun_path + 1, name, len);
  int rc =
      connect(fd, (struct sockaddr *)&sa,
              (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + len));
  close(fd);
  return report_errno("connect", rc);
}

/* ---- privilege state (S33) ---------------------------------------------- */

static int cmd_creds(void) {
  struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
  struct __user_cap_data_struct d[2];
  memset(d, 0, sizeof(d));
  if (syscall(SYS_capget, &h, d) < 0)
    return report_errno("capget", -1);
  uint64_t eff = d[0].effective | (uint64_t)d[1].effective << 32;
  uint64_t prm = d[0].permitted | (uint64_t)d[1].permitted << 32;
  uint64_t inh = d[0].inheritable | (uint64_t)d[1].inheritable << 32;
  uint64_t bnd = 0, amb = 0;
  for (int cap = 0; cap < 64; cap++) {
    int r = prctl(PR_CAPBSET_READ, cap, 0, 0, 0);
    if (r < 0)
      break;
    if (r > 0)
      bnd |= 1ull << cap;
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, cap, 0, 0) > 0)
      amb |= 1ull << cap;
  }
  int nnp = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0);
  printf(
      "effective=%llx\npermitted=%llx\ninheritable=%llx\nbounding=%llx\n"
      "ambient=%llx\nno_new_privs=%d\nuid=%d\n",
      (unsigned long long)eff, (unsigned long long)prm, (unsigned long long)inh,
      (unsigned long long)bnd, (unsigned long long)amb, nnp, (int)getuid());
  return eff == 0 && prm == 0 && inh == 0 && bnd == 0 && amb == 0 && nnp == 1
             ? 0
             : 1;
}

/* ---- the terminal (S10) ------------------------------------------------- */

static int cmd_session(void) {
  printf("pid=%d\nsid=%d\n", (int)getpid(), (int)getsid(0));
  return 0;
}

/* Makes stdin (a terminal) the controlling terminal if the kernel lets it,
 * then tries to push a character into its input queue, with a clean
 * command and with junk in the upper half of the 32-bit argument, and to
 * set its line discipline. */
static int cmd_tiocsti(void) {
  if (getsid(0) != getpid())
    setsid();
  int ctty = ioctl(0, TIOCSCTTY, 0);
  printf("ctty=%s\n", ctty == 0 ? "ok" : strerror(errno));
  char c = 'x';
  int rc = (int)syscall(SYS_ioctl, 0, (unsigned long)TIOCSTI, &c);
  printf("tiocsti=%s\n", rc == 0 ? "ok" : strerror(errno));
  int rc2 =
      (int)syscall(SYS_ioctl, 0, (unsigned long)TIOCSTI | (1ul << 32), &c);
  printf("tiocsti_junk=%s\n", rc2 == 0 ? "ok" : strerror(errno));
  /* A line discipline change reaches kernel code (n_hdlc, n_gsm, ...) no
   * program needs; N_TTY is always present, so the control succeeds. */
  int ldisc = N_TTY;
  int rc4 = ioctl(0, TIOCSETD, &ldisc);
  printf("tiocsetd=%s\n", rc4 == 0 ? "ok" : strerror(errno));
  struct winsize ws;
  int rc3 = ioctl(0, TIOCGWINSZ, &ws);
  printf("tiocgwinsz=%s\n", rc3 == 0 ? "ok" : strerror(errno));
  return rc == 0 || rc2 == 0 ? 0 : 1;
}

/* ---- exit and signals --------------------------------------------------- */

static int cmd_selfkill(const char *sig) {
  int s = atoi(sig);
  fflush(stdout);
  kill(getpid(), s);
  raise(s);
  return 3;
}

static int cmd_wait(void) {
  /* Tell the test we are running, then wait for a signal with its
   * default action. */
  printf("ready\n");
  fflush(stdout);
  for (;;)
    pause();
  return 0;
}

static int cmd_env(const char *name) {
  const char *v = getenv(name);
  printf("%s=%s\n", name, v ? v : "(unset)");
  return v ? 0 : 1;
}

/* ---- changes through a descriptor (S26a) -------------------------------- */

/* PATH opened read-only, or "fd:N": a descriptor the probe was given. */
static int open_target(const char *spec, int flags) {
  if (strncmp(spec, "fd:", 3) == 0)
    return atoi(spec + 3);
  if (strcmp(spec, "memfd") == 0) {
    int fd = memfd_create("probe", MFD_CLOEXEC);
    if (fd < 0) {
      printf("memfd=%s\nerrno=%d\n", strerror(errno), errno);
      exit(1);
    }
    return fd;
  }
  int fd = open(spec, flags | O_CLOEXEC);
  if (fd < 0) {
    printf("open=%s\nerrno=%d\n", strerror(errno), errno);
    exit(1);
  }
  return fd;
}

static int cmd_fchmod(const char *spec, const char *mode) {
  int fd = open_target(spec, O_RDONLY);
  return report_errno("fchmod", fchmod(fd, (mode_t)strtol(mode, NULL, 8)));
}

static int cmd_fchmodat_empty(const char *path, const char *mode) {
  int fd = open_target(path, O_RDONLY);
  /* fchmodat2 (Linux 6.6), the call that takes AT_EMPTY_PATH. */
  long rc = syscall(452, fd, "", (mode_t)strtol(mode, NULL, 8), AT_EMPTY_PATH);
  return report_errno("fchmodat2", (int)rc);
}

static int cmd_futimens(const char *path, const char *seconds) {
  int fd = open_target(path, O_RDONLY);
  struct timespec ts[2] = {{atol(seconds), 0}, {atol(seconds), 0}};
  return report_errno("futimens", futimens(fd, ts));
}

static int cmd_fallocate(const char *spec, const char *len) {
  int fd = open_target(spec, O_RDONLY);
  return report_errno("fallocate", fallocate(fd, 0, 0, atol(len)));
}

static int cmd_ftruncate(const char *spec, const char *len) {
  int fd = open_target(spec, O_RDONLY);
  return report_errno("ftruncate", ftruncate(fd, atol(len)));
}

static int cmd_fsetxattr(const char *path, const char *name,
                         const char *value) {
  int fd = open_target(path, O_RDONLY);
  return report_errno("fsetxattr",
                      fsetxattr(fd, name, value, strlen(value), 0));
}

static int cmd_setxattr(const char *path, const char *name, const char *value) {
  return report_errno("setxattr",
                      setxattr(path, name, value, strlen(value), 0));
}

static int cmd_removexattr(const char *path, const char *name) {
  return report_errno("removexattr", removexattr(path, name));
}

static int cmd_fremovexattr(const char *path, const char *name) {
  int fd = open_target(path, O_RDONLY);
  return report_errno("fremovexattr", fremovexattr(fd, name));
}

/* fchown to the group GID (default: the probe's own). */
static int cmd_fchown(const char *path, const char *gid) {
  int fd = open_target(path, O_RDONLY);
  gid_t g = gid ? (gid_t)atol(gid) : getegid();
  return report_errno("fchown", fchown(fd, (uid_t)-1, g));
}

/* Sets FS_NODUMP_FL (no privilege needed), with a clean command and with
 * junk in the upper half of the 32-bit command (S4). */
static int cmd_setflags(const char *path) {
  int fd = open_target(path, O_RDONLY);
  int flags = 0;
  if (ioctl(fd, FS_IOC_GETFLAGS, &flags) < 0)
    return report_errno("getflags", -1);
  flags |= FS_NODUMP_FL;
  long junk = syscall(SYS_ioctl, fd,
                      (unsigned long)FS_IOC_SETFLAGS | (1ul << 32), &flags);
  printf("setflags_junk=%s\n", junk == 0 ? "ok" : strerror(errno));
  int failed = report_errno("setflags", ioctl(fd, FS_IOC_SETFLAGS, &flags));
  return failed && junk != 0 ? 1 : 0;
}

/* ---- the working directory (S39) ---------------------------------------- */

static int cmd_stat_cwd(void) {
  struct stat st;
  int a = (int)syscall(SYS_newfstatat, AT_FDCWD, "", &st, AT_EMPTY_PATH);
  printf("newfstatat=%s\n", a == 0 ? "ok" : strerror(errno));
  struct statx stx;
  int b = (int)syscall(SYS_statx, AT_FDCWD, "", AT_EMPTY_PATH,
                       STATX_BASIC_STATS, &stx);
  printf("statx=%s\n", b == 0 ? "ok" : strerror(errno));
  if (a == 0)
    printf("ino=%llu\n", (unsigned long long)st.st_ino);
  return a == 0 || b == 0 ? 0 : 1;
}

/* The device and file system of "/": which tree the program runs in. */
static int cmd_root(void) {
  struct stat st;
  struct statfs sf;
  if (stat("/", &st) != 0)
    return report_errno("stat", -1);
  if (statfs("/", &sf) != 0)
    return report_errno("statfs", -1);
  printf("root_dev=%llu\nroot_tmpfs=%d\n", (unsigned long long)st.st_dev,
         sf.f_type == 0x01021994 /* TMPFS_MAGIC */);
  return 0;
}

static int cmd_chdir(const char *path) {
  return report_errno("chdir", chdir(path));
}

/* ---- unix and network sockets (S32a) ------------------------------------ */

static socklen_t unix_addr(struct sockaddr_un *sa, const char *path) {
  memset(sa, 0, sizeof(*sa));
  sa->sun_family = AF_UNIX;
  snprintf(sa->sun_path, sizeof(sa->sun_path), "%s", path);
  return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(path) + 1);
}

/* Sends 'x', expects one byte back. */
static int exchange(int fd) {
  char c = 'x';
  if (write(fd, &c, 1) != 1)
    return report_errno("exchange", -1);
  struct pollfd p = {.fd = fd, .events = POLLIN};
  if (poll(&p, 1, 5000) != 1 || read(fd, &c, 1) != 1)
    return report_errno("exchange", -1);
  printf("exchange=ok\nreply=%c\n", c);
  return 0;
}

static int cmd_connect(const char *path) {
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return report_errno("socket", -1);
  struct sockaddr_un sa;
  socklen_t len = unix_addr(&sa, path);
  if (report_errno("connect", connect(fd, (struct sockaddr *)&sa, len)))
    return 1;
  return exchange(fd);
}

static socklen_t tcp_addr(struct sockaddr_in *sa, const char *port) {
  memset(sa, 0, sizeof(*sa));
  sa->sin_family = AF_INET;
  sa->sin_port = htons((uint16_t)atoi(port));
  sa->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return sizeof(*sa);
}

static int cmd_connect_tcp(const char *port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return report_errno("socket", -1);
  struct sockaddr_in sa;
  socklen_t len = tcp_addr(&sa, port);
  if (report_errno("connect", connect(fd, (struct sockaddr *)&sa, len)))
    return 1;
  return exchange(fd);
}

/* A server on 127.0.0.1:PORT (0: one the kernel picks) and its own
 * client: binds, listens, connects to itself and exchanges a byte each
 * way. */
static int cmd_tcp_self(const char *port) {
  struct sockaddr_in sa;
  socklen_t len = tcp_addr(&sa, port);
  int srv = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (srv < 0)
    return report_errno("socket", -1);
  if (report_errno("bind", bind(srv, (struct sockaddr *)&sa, len)) ||
      report_errno("listen", listen(srv, 1)) ||
      getsockname(srv, (struct sockaddr *)&sa, &len) < 0)
    return 1;
  int cli = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (cli < 0)
    return report_errno("socket", -1);
  if (report_errno("connect", connect(cli, (struct sockaddr *)&sa, len)))
    return 1;
  int conn = accept4(srv, NULL, NULL, SOCK_CLOEXEC);
  if (conn < 0)
    return report_errno("accept", -1);
  char c = 'q';
  if (write(cli, &c, 1) != 1 || read(conn, &c, 1) != 1 || c != 'q')
    return report_errno("exchange", -1);
  c = 'z';
  if (write(conn, &c, 1) != 1 || read(cli, &c, 1) != 1)
    return report_errno("exchange", -1);
  printf("exchange=ok\nreply=%c\n", c);
  return 0;
}

/* Whether the stream socket fd is connected to the socket bound at path. */
static bool peer_is(int fd, const char *path) {
  struct sockaddr_un peer;
  socklen_t len = sizeof(peer);
  memset(&peer, 0, sizeof(peer));
  if (getpeername(fd, (struct sockaddr *)&peer, &len) < 0)
    return false;
  return strcmp(peer.sun_path, path) == 0;
}

/* A thread flips the address between an allowed and a canary socket path
 * while the main thread connects (S30, for addresses). */
static struct sockaddr_un flip_addr;
static struct sockaddr_un flip_a, flip_b;

static void *addr_flipper(void *unused) {
  (void)unused;
  while (!atomic_load_explicit(&race_stop, memory_order_relaxed)) {
    /* The barriers keep the compiler from dropping the first copy as
     * overwritten by the second. */
    memcpy(&flip_addr, &flip_b, sizeof(flip_addr));
    __asm__ volatile("" ::: "memory");
    for (volatile int spin = 0; spin < 200; spin++) {
    }
    memcpy(&flip_addr, &flip_a, sizeof(flip_addr));
    __asm__ volatile("" ::: "memory");
    for (volatile int spin = 0; spin < 200; spin++) {
    }
  }
  return NULL;
}

static int cmd_connect_race(const char *allowed, const char *canary,
                            const char *count) {
  unix_addr(&flip_a, allowed);
  unix_addr(&flip_b, canary);
  memcpy(&flip_addr, &flip_a, sizeof(flip_addr));
  pthread_t t;
  if (pthread_create(&t, NULL, addr_flipper, NULL) != 0)
    return 2;
  long n = atol(count), ok = 0, refused = 0, hit = 0;
  for (long i = 0; i < n; i++) {
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
      return report_errno("socket", -1);
    if (connect(fd, (struct sockaddr *)&flip_addr, sizeof(flip_addr)) == 0) {
      ok++;
      hit += peer_is(fd, canary);
    } else {
      refused++;
    }
    close(fd);
  }
  atomic_store(&race_stop, 1);
  pthread_join(t, NULL);
  printf("connected=%ld\nrefused=%ld\ncanary=%ld\n", ok, refused, hit);
  return hit == 0 ? 0 : 1;
}

/* A thread swaps descriptor N between a TCP socket and an unconnected
 * unix socket, and the address between a TCP one and the canary path,
 * while the main thread connects N: a supervisor that let the kernel look
 * N up again after deciding on a TCP socket would connect the unix one. */
static atomic_int swap_inet = -1, swap_unix = -1;
static const int swap_fd = 900;
static struct sockaddr_storage swap_addr;
static struct sockaddr_storage swap_tcp, swap_canary;

static void *fd_swapper(void *unused) {
  (void)unused;
  while (!atomic_load_explicit(&race_stop, memory_order_relaxed)) {
    int u = atomic_load(&swap_unix);
    if (u >= 0)
      dup2(u, swap_fd);
    memcpy(&swap_addr, &swap_canary, sizeof(swap_addr));
    __asm__ volatile("" ::: "memory");
    for (volatile int spin = 0; spin < 100; spin++) {
    }
    int i = atomic_load(&swap_inet);
    if (i >= 0)
      dup2(i, swap_fd);
    memcpy(&swap_addr, &swap_tcp, sizeof(swap_addr));
    __asm__ volatile("" ::: "memory");
    for (volatile int spin = 0; spin < 100; spin++) {
    }
  }
  return NULL;
}

static int cmd_fd_race(const char *port, const char *canary,
                       const char *count) {
  tcp_addr((struct sockaddr_in *)&swap_tcp, port);
  unix_addr((struct sockaddr_un *)&swap_canary, canary);
  memcpy(&swap_addr, &swap_tcp, sizeof(swap_addr));
  pthread_t t;
  if (pthread_create(&t, NULL, fd_swapper, NULL) != 0)
    return 2;
  long n = atol(count), tcp = 0, hit = 0, failed = 0;
  for (long i = 0; i < n; i++) {
    int in = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int un = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (in < 0 || un < 0)
      return report_errno("socket", -1);
    dup2(in, swap_fd);
    atomic_store(&swap_inet, in);
    atomic_store(&swap_unix, un);
    /* Give the swapper time to be anywhere in its cycle. */
    for (volatile int spin = 0; spin < 3000; spin++) {
    }
    /* One length that suits both addresses. */
    if (connect(swap_fd, (struct sockaddr *)&swap_addr,
                sizeof(struct sockaddr_un)) == 0)
      tcp++;
    else
      failed++;
    atomic_store(&swap_inet, -1);
    atomic_store(&swap_unix, -1);
    hit += peer_is(un, canary);
    close(in);
    close(un);
  }
  atomic_store(&race_stop, 1);
  pthread_join(t, NULL);
  close(swap_fd);
  printf("connected=%ld\nfailed=%ld\ncanary=%ld\n", tcp, failed, hit);
  return hit == 0 ? 0 : 1;
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const char *slow_statfile;
static double slow_max_stat;

static void *stat_loop(void *unused) {
  (void)unused;
  while (!atomic_load_explicit(&race_stop, memory_order_relaxed)) {
    struct stat st;
    double t0 = now();
    stat(slow_statfile, &st);
    double dt = now() - t0;
    if (dt > slow_max_stat)
      slow_max_stat = dt;
    usleep(1000);
  }
  return NULL;
}

/* A blocking connect that the listener keeps waiting (its accept queue is
 * full): it must not hold up the supervisor, which keeps serving the
 * other thread's stat calls. MARKER is made just before the connect. */
static int cmd_connect_tcp_slow(const char *port, const char *marker,
                                const char *statfile) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return report_errno("socket", -1);
  slow_statfile = statfile;
  pthread_t t;
  if (pthread_create(&t, NULL, stat_loop, NULL) != 0)
    return 2;
  struct sockaddr_in sa;
  socklen_t len = tcp_addr(&sa, port);
  int m = open(marker, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (m >= 0)
    close(m);
  double t0 = now();
  int rc = connect(fd, (struct sockaddr *)&sa, len);
  double elapsed = now() - t0;
  atomic_store(&race_stop, 1);
  pthread_join(t, NULL);
  printf("elapsed_ms=%d\nmax_stat_ms=%d\n", (int)(elapsed * 1000),
         (int)(slow_max_stat * 1000));
  return report_errno("connect", rc);
}

static int cmd_socket_unix_dgram(void) {
  int d = socket(AF_UNIX, SOCK_DGRAM, 0);
  printf("dgram=%s\n", d >= 0 ? "ok" : strerror(errno));
  int r = socket(AF_UNIX, SOCK_RAW, 0);
  printf("raw=%s\n", r >= 0 ? "ok" : strerror(errno));
  return d >= 0 || r >= 0 ? 0 : 1;
}

/* Binds PATH (after chdir CHDIR, for relative names), listens, connects
 * to it and exchanges a byte with itself. */
static int cmd_bind(const char *path, const char *dir) {
  if (dir && chdir(dir) < 0)
    return report_errno("chdir", -1);
  int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0)
    return report_errno("socket", -1);
  struct sockaddr_un sa;
  socklen_t len = unix_addr(&sa, path);
  if (report_errno("bind", bind(s, (struct sockaddr *)&sa, len)))
    return 1;
  if (listen(s, 4) < 0)
    return report_errno("listen", -1);
  struct sockaddr_un name;
  socklen_t nlen = sizeof(name);
  memset(&name, 0, sizeof(name));
  if (getsockname(s, (struct sockaddr *)&name, &nlen) == 0)
    printf("name=%s\n", name.sun_path);
  int c = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (report_errno("connect", connect(c, (struct sockaddr *)&sa, len)))
    return 1;
  int a = accept(s, NULL, NULL);
  if (a < 0)
    return report_errno("accept", -1);
  char ch = 'y';
  if (write(a, &ch, 1) != 1)
    return report_errno("write", -1);
  return exchange(c);
}

/* ---- what ordinary programs do ----------------------------------------- */

/* An O_PATH open, then what programs do with one: fstat it, and open a
 * name relative to it when it is a directory. */
static int cmd_opath(const char *path, const char *name) {
  int fd = open(path, O_PATH | O_CLOEXEC);
  if (report_errno("open", fd < 0 ? -1 : 0))
    return 1;
  struct stat st;
  if (report_errno("fstat", fstat(fd, &st)))
    return 1;
  printf("type=%s\n", S_ISDIR(st.st_mode) ? "dir" : "other");
  if (!name)
    return 0;
  int f = openat(fd, name, O_RDONLY | O_CLOEXEC);
  return report_errno("openat", f < 0 ? -1 : 0);
}

/* An inotify watch of dir for new names, a file made there and the
 * event read back; with link, a watch of the link itself
 * (IN_DONT_FOLLOW) and one of what it leads to. */
static int cmd_watch(const char *dir, const char *link) {
  int in = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
  if (report_errno("init", in))
    return 1;
  int wd = inotify_add_watch(in, dir, IN_CREATE);
  if (report_errno("watch", wd < 0 ? -1 : 0))
    return 1;
  char name[PATH_MAX];
  snprintf(name, sizeof(name), "%s/new", dir);
  int f = open(name, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  if (f >= 0) {
    close(f);
    char buf[sizeof(struct inotify_event) + NAME_MAX + 1]
        __attribute__((aligned(__alignof__(struct inotify_event))));
    ssize_t n = read(in, buf, sizeof(buf));
    const struct inotify_event *ev = (const struct inotify_event *)buf;
    printf("event=%s\n",
           n > 0 && ev->wd == wd && (ev->mask & IN_CREATE) ? ev->name : "none");
  }
  if (!link)
    return 0;
  int rc = report_errno(
      "watch-link",
      inotify_add_watch(in, link, IN_ATTRIB | IN_DONT_FOLLOW) < 0 ? -1 : 0);
  rc |= report_errno("watch-target",
                     inotify_add_watch(in, link, IN_ATTRIB) < 0 ? -1 : 0);
  return rc;
}

/* A child that waits forever on the same stdout, then acct(2): the call
 * the supervisor fault (supervisor_fault_preload.c) fails on. */
static int cmd_spawn_then_acct(void) {
  fflush(stdout);
  pid_t child = fork();
  if (child < 0)
    return report_errno("fork", -1);
  if (child == 0) {
    for (;;)
      pause();
  }
  printf("child=%d\n", (int)child);
  fflush(stdout);
  int rc = report_errno("acct", acct(NULL));
  kill(child, SIGKILL);
  return rc;
}

/* Identity calls with the ids the probe already has (as glibc's
 * posix_spawn with POSIX_SPAWN_RESETIDS makes them), or, with "change",
 * calls that would change one. */
static int cmd_setids(bool change) {
  uid_t u = getuid();
  gid_t g = getgid();
  gid_t groups[256];
  int n = getgroups(256, groups);
  if (n < 0)
    return report_errno("getgroups", -1);
  if (change) {
    int a = report_errno("setresuid", setresuid((uid_t)-1, u + 1, (uid_t)-1));
    int b = report_errno("setgid", setgid(g + 1));
    groups[n] = g + 1;
    int c = report_errno("setgroups", setgroups((size_t)n + 1, groups));
    return a && b && c ? 1 : 0;
  }
  int bad = 0;
  bad |= report_errno("setresuid", setresuid((uid_t)-1, u, (uid_t)-1));
  bad |= report_errno("setresgid", setresgid(g, g, g));
  bad |= report_errno("setuid", setuid(u));
  bad |= report_errno("setgid", setgid(g));
  bad |= report_errno("setreuid", setreuid((uid_t)-1, (uid_t)-1));
  bad |= report_errno("setregid", setregid(g, g));
  bad |= report_errno("setgroups", setgroups((size_t)n, groups));
  /* setfsuid returns the id in place: the same one, changed nothing. */
  int fs = setfsuid(u);
  printf("setfsuid=%s\n", fs == (int)u ? "ok" : "changed");
  bad |= fs != (int)u;
  return bad;
}

/* ---- tracing ------------------------------------------------------------ */

static volatile long traced_word = 0x5b78;

/* A child of the probe stops for it as a debugger's does; the probe reads
 * the child's memory with PTRACE_PEEKDATA and process_vm_readv, then lets
 * it finish. */
static int cmd_traceme(void) {
  fflush(stdout);
  pid_t child = fork();
  if (child < 0)
    return report_errno("fork", -1);
  if (child == 0) {
    if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) != 0)
      _exit(3);
    raise(SIGSTOP);
    _exit(7);
  }
  int st = 0;
  if (waitpid(child, &st, 0) != child)
    return report_errno("waitpid", -1);
  if (!WIFSTOPPED(st)) {
    printf("traceme=%s\n", WIFEXITED(st) && WEXITSTATUS(st) == 3
                               ? "refused"
                               : "child did not stop");
    return 1;
  }
  errno = 0;
  long peeked = ptrace(PTRACE_PEEKDATA, child, (void *)&traced_word, NULL);
  int peek_errno = errno;
  long word = 0;
  struct iovec local = {&word, sizeof word};
  struct iovec remote = {(void *)&traced_word, sizeof word};
  ssize_t got = process_vm_readv(child, &local, 1, &remote, 1, 0);
  int read_errno = errno;
  ptrace(PTRACE_CONT, child, NULL, NULL);
  waitpid(child, &st, 0);
  printf("peek=%s\n", peek_errno ? strerror(peek_errno) : "ok");
  printf("vm_read=%s\n",
         got == (ssize_t)sizeof word ? "ok" : strerror(read_errno));
  bool ok = !peek_errno && peeked == traced_word &&
            got == (ssize_t)sizeof word && word == traced_word &&
            WIFEXITED(st) && WEXITSTATUS(st) == 7;
  printf("traceme=%s\n", ok ? "ok" : "failed");
  return ok ? 0 : 1;
}

/* Tries to take hold of another process: attach to it, and read its
 * memory without attaching. Refused means both fail on permission
 * (EPERM) or on a process the probe cannot see (ESRCH); a read that
 * reaches the address (even to fault) was allowed. */
static int cmd_attach(const char *pid_text) {
  pid_t pid = (pid_t)atoi(pid_text);
  int attached =
      report_errno("attach", (int)ptrace(PTRACE_ATTACH, pid, NULL, NULL));
  if (attached == 0) {
    waitpid(pid, NULL, 0);
    ptrace(PTRACE_DETACH, pid, NULL, NULL);
  }
  long word = 0;
  struct iovec local = {&word, sizeof word};
  struct iovec remote = {(void *)&traced_word, sizeof word};
  ssize_t got = process_vm_readv(pid, &local, 1, &remote, 1, 0);
  bool read_refused = got < 0 && (errno == EPERM || errno == ESRCH);
  printf("vm_read=%s\n", got >= 0 ? "ok" : strerror(errno));
  return attached != 0 && read_refused ? 1 : 0;
}

/* ---- links (made, followed, swapped) ------------------------------------ */

static int cmd_exec(const char *path) {
  char *const args[] = {(char *)path, NULL};
  execv(path, args);
  return report_errno("exec", -1);
}

static char link_a[4096], link_b[4096], link_name[4096];
static atomic_int link_stop;
static atomic_long link_flips;

/* Points link_name at link_a, then at link_b, and again, each time by
 * renaming a fresh link over it. */
static void *link_flipper(void *unused) {
  (void)unused;
  char tmp[4200];
  snprintf(tmp, sizeof(tmp), "%s.tmp", link_name);
  for (unsigned i = 0; !atomic_load(&link_stop); i++) {
    unlink(tmp);
    if (symlink(i % 2 ? link_b : link_a, tmp) == 0 &&
        rename(tmp, link_name) == 0)
      atomic_fetch_add(&link_flips, 1);
  }
  return NULL;
}

/* Reads LINK at least N times, and until another thread has swapped it
 * between INSIDE and CANARY N/4 times; counts what each read returned. */
static int cmd_link_race(const char *inside, const char *canary,
                         const char *link, const char *count) {
  snprintf(link_a, sizeof(link_a), "%s", inside);
  snprintf(link_b, sizeof(link_b), "%s", canary);
  snprintf(link_name, sizeof(link_name), "%s", link);
  char want_canary[256] = {0}, buf[256];
  int cfd = open(canary, O_RDONLY);
  if (cfd >= 0) {
    ssize_t n = read(cfd, want_canary, sizeof(want_canary) - 1);
    (void)n;
    close(cfd);
  }
  if (symlink(inside, link) < 0 && errno != EEXIST)
    return report_errno("symlink", -1);
  pthread_t t;
  pthread_create(&t, NULL, link_flipper, NULL);
  long n = atol(count), canary_reads = 0, other_reads = 0;
  for (long i = 0; i < n || atomic_load(&link_flips) < n / 4; i++) {
    int fd = open(link, O_RDONLY);
    if (fd < 0)
      continue;
    ssize_t got = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (got <= 0)
      continue;
    buf[got] = '\0';
    if (want_canary[0] && strcmp(buf, want_canary) == 0)
      canary_reads++;
    else
      other_reads++;
  }
  atomic_store(&link_stop, 1);
  pthread_join(t, NULL);
  printf("canary_reads=%ld\nother_reads=%ld\n", canary_reads, other_reads);
  return 0;
}

static int link_commands(int argc, char **argv) {
  const char *cmd = argv[1];
  if (strcmp(cmd, "symlink") == 0 && argc == 4)
    return report_errno("symlink", symlink(argv[2], argv[3]));
  if (strcmp(cmd, "link-connect") == 0 && argc == 4)
    return report_errno("symlink", symlink(argv[2], argv[3])) ||
           cmd_connect(argv[3]);
  if (strcmp(cmd, "link") == 0 && argc == 4)
    return report_errno("link", link(argv[2], argv[3]));
  if (strcmp(cmd, "exec") == 0 && argc == 3)
    return cmd_exec(argv[2]);
  if (strcmp(cmd, "link-race") == 0 && argc == 6)
    return cmd_link_race(argv[2], argv[3], argv[4], argv[5]);
  return usage();
}

/* ---- job control on a terminal ----------------------------------------- */

static volatile sig_atomic_t job_tstp;

static void on_tstp(int sig) {
  (void)sig;
  job_tstp = 1;
}

/* Says whether it is its terminal's foreground job, then reads lines:
 * a SIGTSTP (Ctrl-Z) is reported, obeyed (the probe stops), and its
 * continuation reported; a line is echoed as got=LINE and ends it. */
static int cmd_job(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = on_tstp;
  sigaction(SIGTSTP, &sa, NULL);
  /* SIGTSTP is taken only inside ppoll, so none is missed before a
   * wait. */
  sigset_t tstp, waiting;
  sigemptyset(&tstp);
  sigaddset(&tstp, SIGTSTP);
  sigprocmask(SIG_BLOCK, &tstp, &waiting);
  sigdelset(&waiting, SIGTSTP);
  printf("foreground=%s\nready\n", tcgetpgrp(0) == getpgrp() ? "yes" : "no");
  fflush(stdout);
  char line[256];
  for (;;) {
    struct pollfd p = {.fd = 0, .events = POLLIN};
    int rc = ppoll(&p, 1, NULL, &waiting);
    if (job_tstp) {
      job_tstp = 0;
      printf("stopping\n");
      fflush(stdout);
      signal(SIGTSTP, SIG_DFL);
      sigprocmask(SIG_UNBLOCK, &tstp, NULL);
      raise(SIGTSTP);
      sigprocmask(SIG_BLOCK, &tstp, NULL);
      sigaction(SIGTSTP, &sa, NULL);
      printf("continued\n");
      fflush(stdout);
      continue;
    }
    if (rc <= 0)
      continue;
    ssize_t n = read(0, line, sizeof(line) - 1);
    if (n <= 0)
      return 1;
    line[n] = '\0';
    line[strcspn(line, "\r\n")] = '\0';
    printf("got=%s\n", line);
    return 0;
  }
}

/* A pseudo-terminal pair: a line written to the master is read back from
 * the slave. Prints the slave's name and the device of the devpts that
 * holds it (dev=MAJOR:MINOR of /dev/pts). */
static int cmd_pty(void) {
  int master = posix_openpt(O_RDWR | O_NOCTTY);
  if (master < 0)
    return report_errno("pty", -1);
  char *name = NULL;
  if (grantpt(master) != 0 || unlockpt(master) != 0 ||
      (name = ptsname(master)) == NULL)
    return report_errno("pty", -1);
  int slave = open(name, O_RDWR | O_NOCTTY);
  if (slave < 0)
    return report_errno("pty", -1);
  struct termios t;
  if (tcgetattr(slave, &t) != 0)
    return report_errno("pty", -1);
  t.c_lflag &= ~(tcflag_t)ECHO;
  if (tcsetattr(slave, TCSANOW, &t) != 0 || write(master, "ping\n", 5) != 5)
    return report_errno("pty", -1);
  char line[16] = "";
  ssize_t n = read(slave, line, sizeof line - 1);
  if (n < 0)
    return report_errno("pty", -1);
  line[n] = '\0';
  line[strcspn(line, "\r\n")] = '\0';
  const char *tty = ttyname(slave);
  printf("pty=ok\nname=%s\ngot=%s\nttyname=%s\n", name, line,
         tty ? tty : strerror(errno));
  struct stat st;
  if (stat("/dev/pts", &st) == 0)
    printf("dev=%u:%u\n", major(st.st_dev), minor(st.st_dev));
  return 0;
}

/* /dev/tty: whether it is the terminal on standard input (the device
 * behind each, TIOCGDEV), the terminal's name, and a line written
 * through it. */
static int cmd_devtty(void) {
  int fd = open("/dev/tty", O_RDWR | O_NOCTTY);
  if (fd < 0)
    return report_errno("devtty", -1);
  unsigned a = 0, b = 0;
  if (ioctl(fd, TIOCGDEV, &a) != 0 || ioctl(0, TIOCGDEV, &b) != 0)
    return report_errno("devtty", -1);
  printf("devtty=%s\n", a == b ? "stdin's" : "another terminal");
  /* Its name, found as ttyname finds it, and the devpts instance that
   * holds it. */
  const char *name = ttyname(0);
  struct stat st;
  if (name && stat(name, &st) == 0)
    printf("ttyname=%s\ninstance=%u:%u\n", name, major(st.st_dev),
           minor(st.st_dev));
  else
    printf("ttyname=none\n");
  fflush(stdout);
  bool wrote = write(fd, "through /dev/tty\n", 17) == 17;
  close(fd);
  return wrote ? 0 : report_errno("devtty_write", -1);
}

static int program_commands(int argc, char **argv) {
  const char *cmd = argv[1];
  if (strcmp(cmd, "devtty") == 0)
    return cmd_devtty();
  if (strcmp(cmd, "job") == 0)
    return cmd_job();
  if (strcmp(cmd, "pty") == 0)
    return cmd_pty();
  if (strcmp(cmd, "setids") == 0 && (argc == 2 || argc == 3))
    return cmd_setids(argc == 3 && strcmp(argv[2], "change") == 0);
  if (strcmp(cmd, "watch") == 0 && (argc == 3 || argc == 4))
    return cmd_watch(argv[2], argc == 4 ? argv[3] : NULL);
  if (strcmp(cmd, "opath") == 0 && (argc == 3 || argc == 4))
    return cmd_opath(argv[2], argc == 4 ? argv[3] : NULL);
  if (strcmp(cmd, "spawn-then-acct") == 0)
    return cmd_spawn_then_acct();
  if (strcmp(cmd, "traceme") == 0)
    return cmd_traceme();
  if (strcmp(cmd, "attach") == 0 && argc == 3)
    return cmd_attach(argv[2]);
  return link_commands(argc, argv);
}

/* ---- names written as directories -------------------------------------
 * In DIR: sub/ (a directory), link -> sub, f (a file), flink -> f. Each
 * call on a name written as a directory ("name/", "name/.", "name/..")
 * prints what the kernel answered; the sandbox must answer the same. */

static void dirform_result(const char *what, const char *name, long rc,
                           const char *value) {
  if (rc < 0)
    printf("%s %s=%s\n", what, name, strerrorname_np(errno));
  else
    printf("%s %s=%s\n", what, name, value ? value : "ok");
}

static const char *type_name(mode_t m) {
  return S_ISDIR(m)   ? "dir"
         : S_ISLNK(m) ? "link"
         : S_ISREG(m) ? "file"
                      : "other";
}

/* Names with `..` after a symbolic link, looked up from DIR's descriptor
 * and from DIR's absolute name: each `..` leads to the parent of where
 * the link leads. The first line of what each name opens, or errno. */
static void dotdot_read(const char *how, int at, const char *name) {
  char buf[64] = "";
  int fd = openat(at, name, O_RDONLY | O_CLOEXEC);
  ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf - 1);
  int err = errno;
  if (fd >= 0)
    close(fd);
  buf[n > 0 ? n : 0] = '\0';
  char *nl = strchr(buf, '\n');
  if (nl)
    *nl = '\0';
  printf("%s %s=%s\n", how, name, fd < 0 ? strerrorname_np(err) : buf);
}

static int cmd_dotdot(const char *dir) {
  static const char *const names[] = {
      "link/../f",   "abs/../f",      "link/../../../f", "link/../dir/../f",
      "chain/../f",  "missing/../f",  "top/../f",        "loop/../f",
      "link/./../f", "link/../../b/f"};
  int at = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (at < 0)
    return report_errno("open", -1);
  char path[4096];
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    dotdot_read("at", at, names[i]);
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    dotdot_read("path", AT_FDCWD, path);
  }
  /* A directory listed and one made through such a name. */
  int d = openat(at, "link/..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR *listing = d < 0 ? NULL : fdopendir(d);
  int entries = 0;
  for (struct dirent *e; listing && (e = readdir(listing));)
    entries += e->d_name[0] != '.';
  printf("list link/..=%d\n", listing ? entries : -1);
  if (listing)
    closedir(listing);
  long rc = mkdirat(at, "link/../made", 0755);
  struct stat st;
  printf("mkdir link/../made=%s in-a/b=%s\n",
         rc < 0 ? strerrorname_np(errno) : "ok",
         fstatat(at, "a/b/made", &st, 0) == 0 ? "yes" : "no");
  close(at);
  return 0;
}

static int cmd_dirforms(const char *dir) {
  static const char *const looked[] = {"link", "link/", "link/.", "flink/",
                                       "f/",   "sub/",  "sub/..", "missing/"};
  char path[4096], path2[4096], buf[256];
  for (size_t i = 0; i < sizeof looked / sizeof looked[0]; i++) {
    snprintf(path, sizeof path, "%s/%s", dir, looked[i]);
    struct stat st;
    long rc = lstat(path, &st);
    dirform_result("lstat", looked[i], rc,
                   rc == 0 ? type_name(st.st_mode) : NULL);
    ssize_t n = readlink(path, buf, sizeof buf - 1);
    if (n >= 0)
      buf[n] = '\0';
    dirform_result("readlink", looked[i], n, n >= 0 ? buf : NULL);
    rc = access(path, F_OK);
    dirform_result("access", looked[i], rc, NULL);
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    dirform_result("open-nofollow", looked[i], fd, NULL);
    if (fd >= 0)
      close(fd);
  }
  static const char *const created[] = {"new/", "sub/", "f/"};
  for (size_t i = 0; i < sizeof created / sizeof created[0]; i++) {
    snprintf(path, sizeof path, "%s/%s", dir, created[i]);
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    dirform_result("create", created[i], fd, NULL);
    if (fd >= 0)
      close(fd);
  }
  static const char *const unlinked[] = {"f/", "link/", "sub/", "sub/."};
  for (size_t i = 0; i < sizeof unlinked / sizeof unlinked[0]; i++) {
    snprintf(path, sizeof path, "%s/%s", dir, unlinked[i]);
    dirform_result("unlink", unlinked[i], unlink(path), NULL);
  }
  static const char *const removed[] = {"link/", "f/", "sub/.", "sub/.."};
  for (size_t i = 0; i < sizeof removed / sizeof removed[0]; i++) {
    snprintf(path, sizeof path, "%s/%s", dir, removed[i]);
    dirform_result("rmdir", removed[i], rmdir(path), NULL);
  }
  static const char *const renamed[] = {"f/", "link/", "sub/."};
  snprintf(path2, sizeof path2, "%s/renamed", dir);
  for (size_t i = 0; i < sizeof renamed / sizeof renamed[0]; i++) {
    snprintf(path, sizeof path, "%s/%s", dir, renamed[i]);
    dirform_result("rename", renamed[i], rename(path, path2), NULL);
  }
  /* What is left: nothing above may have changed the directory. */
  static const char *const left[] = {"sub",   "link", "f",
                                     "flink", "new",  "renamed"};
  for (size_t i = 0; i < sizeof left / sizeof left[0]; i++) {
    snprintf(path, sizeof path, "%s/%s", dir, left[i]);
    struct stat st;
    long rc = lstat(path, &st);
    dirform_result("left", left[i], rc, rc == 0 ? type_name(st.st_mode) : NULL);
  }
  return 0;
}

/* ---- FIFOs -------------------------------------------------------------
 * In DIR: makes a FIFO and opens it the ways programs do; each line says
 * what happened, the same inside the sandbox as outside. */

static void on_alarm(int sig) {
  (void)sig;
}

/* A child that sleeps a little, opens the FIFO with flags, writes text
 * (if any) or reads into the pipe `to_parent`, and exits. */
static pid_t fifo_peer(const char *path, int flags, const char *text,
                       int to_parent) {
  pid_t pid = fork();
  if (pid != 0)
    return pid;
  usleep(200 * 1000);
  int fd = open(path, flags | O_CLOEXEC);
  if (fd < 0)
    _exit(1);
  if (text) {
    ssize_t w = write(fd, text, strlen(text));
    _exit(w == (ssize_t)strlen(text) ? 0 : 1);
  }
  char buf[64];
  ssize_t n = read(fd, buf, sizeof buf);
  ssize_t w = n > 0 ? write(to_parent, buf, (size_t)n) : 0;
  _exit(w == n ? 0 : 1);
}

static void fifo_wait(pid_t pid) {
  int status;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
}

/* mknod of regular files, as make(1)-style tools and Python's os.mknod
 * make them: by type, without a type, and over a name that exists. */
static int cmd_mknod(const char *dir) {
  static const struct {
    const char *name;
    mode_t mode;
  } rows[] = {{"typed", S_IFREG | 0640}, {"untyped", 0600}, {"typed", 0600}};
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    char path[4096];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", dir, rows[i].name);
    if (mknod(path, rows[i].mode, 0) < 0)
      printf("%s=%s\n", rows[i].name, strerrorname_np(errno));
    else if (stat(path, &st) < 0)
      printf("%s=stat-%s\n", rows[i].name, strerrorname_np(errno));
    else
      printf("%s=%s %o size=%lld\n", rows[i].name,
             S_ISREG(st.st_mode) ? "file" : "other", st.st_mode & 07777,
             (long long)st.st_size);
  }
  return 0;
}

static int cmd_fifo(const char *dir) {
  char path[4096], buf[64];
  snprintf(path, sizeof path, "%s/probe-fifo", dir);
  if (mkfifo(path, 0600) < 0)
    return report_errno("mkfifo", -1);
  printf("mkfifo=ok\n");
  /* Its attributes change like a file's. */
  struct timespec times[2] = {{7, 0}, {7, 0}};
  struct stat st;
  bool changed =
      chmod(path, 0640) == 0 && utimensat(AT_FDCWD, path, times, 0) == 0 &&
      stat(path, &st) == 0 && (st.st_mode & 07777) == 0640 && st.st_mtime == 7;
  printf("attributes=%s\n", changed ? "changed" : strerrorname_np(errno));
  /* As tar restores an extracted FIFO's mode: through an O_PATH
   * descriptor's /proc/self/fd name. */
  int opath = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  char self[64];
  snprintf(self, sizeof self, "/proc/self/fd/%d", opath);
  changed = opath >= 0 && chmod(self, 0600) == 0 && stat(path, &st) == 0 &&
            (st.st_mode & 07777) == 0600;
  printf("opath-chmod=%s\n", changed ? "ok" : strerrorname_np(errno));
  if (opath >= 0)
    close(opath);
  /* No reader yet: a writer that will not wait is told so. */
  int fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  printf("write-nonblock=%s\n", fd < 0 ? strerrorname_np(errno) : "ok");
  /* A reader waits for its writer. */
  pid_t peer = fifo_peer(path, O_WRONLY, "from-writer", -1);
  fd = open(path, O_RDONLY | O_CLOEXEC);
  ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf - 1);
  buf[n > 0 ? n : 0] = '\0';
  printf("reader=%s\n", fd < 0 ? strerrorname_np(errno) : buf);
  if (fd >= 0)
    close(fd);
  fifo_wait(peer);
  /* A writer waits for its reader. */
  int p[2];
  if (pipe2(p, O_CLOEXEC) < 0)
    return 2;
  peer = fifo_peer(path, O_RDONLY, NULL, p[1]);
  close(p[1]);
  fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd >= 0) {
    ssize_t w = write(fd, "from-parent", 11);
    (void)w;
    close(fd);
  }
  n = read(p[0], buf, sizeof buf - 1);
  buf[n > 0 ? n : 0] = '\0';
  close(p[0]);
  fifo_wait(peer);
  printf("writer=%s read-by-peer=%s\n", fd < 0 ? strerrorname_np(errno) : "ok",
         buf);
  /* A writer with no reader to come is interrupted by a signal. */
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_alarm;
  sigaction(SIGALRM, &sa, NULL);
  struct itimerval it = {.it_value = {.tv_usec = 200 * 1000}};
  setitimer(ITIMER_REAL, &it, NULL);
  fd = open(path, O_WRONLY | O_CLOEXEC);
  printf("interrupted=%s\n", fd < 0 ? strerrorname_np(errno) : "opened");
  if (fd >= 0)
    close(fd);
  /* A writer that comes and goes without writing: the reader sees EOF. */
  peer = fifo_peer(path, O_WRONLY, "", -1);
  fd = open(path, O_RDONLY | O_CLOEXEC);
  n = fd < 0 ? -1 : read(fd, buf, sizeof buf);
  printf("empty-writer=%s\n", fd < 0   ? strerrorname_np(errno)
                              : n == 0 ? "eof"
                                       : "data");
  if (fd >= 0)
    close(fd);
  fifo_wait(peer);
  /* O_RDWR never waits. */
  fd = open(path, O_RDWR | O_CLOEXEC);
  n = fd < 0 ? -1 : write(fd, "x", 1);
  n = n == 1 ? read(fd, buf, 1) : -1;
  printf("read-write=%s\n", n == 1 ? "ok" : strerrorname_np(errno));
  if (fd >= 0)
    close(fd);
  unlink(path);
  return 0;
}

static int more_commands(int argc, char **argv) {
  const char *cmd = argv[1];
  if (strcmp(cmd, "fchmod") == 0 && argc == 4)
    return cmd_fchmod(argv[2], argv[3]);
  if (strcmp(cmd, "fchmodat-empty") == 0 && argc == 4)
    return cmd_fchmodat_empty(argv[2], argv[3]);
  if (strcmp(cmd, "futimens") == 0 && argc == 4)
    return cmd_futimens(argv[2], argv[3]);
  if (strcmp(cmd, "fallocate") == 0 && argc == 4)
    return cmd_fallocate(argv[2], argv[3]);
  if (strcmp(cmd, "ftruncate") == 0 && argc == 4)
    return cmd_ftruncate(argv[2], argv[3]);
  if (strcmp(cmd, "fsetxattr") == 0 && argc == 5)
    return cmd_fsetxattr(argv[2], argv[3], argv[4]);
  if (strcmp(cmd, "setxattr") == 0 && argc == 5)
    return cmd_setxattr(argv[2], argv[3], argv[4]);
  if (strcmp(cmd, "removexattr") == 0 && argc == 4)
    return cmd_removexattr(argv[2], argv[3]);
  if (strcmp(cmd, "fremovexattr") == 0 && argc == 4)
    return cmd_fremovexattr(argv[2], argv[3]);
  if (strcmp(cmd, "fchown") == 0 && (argc == 3 || argc == 4))
    return cmd_fchown(argv[2], argc == 4 ? argv[3] : NULL);
  if (strcmp(cmd, "setflags") == 0 && argc == 3)
    return cmd_setflags(argv[2]);
  if (strcmp(cmd, "stat-cwd") == 0)
    return cmd_stat_cwd();
  if (strcmp(cmd, "root") == 0)
    return cmd_root();
  if (strcmp(cmd, "chdir") == 0 && argc == 3)
    return cmd_chdir(argv[2]);
  if (strcmp(cmd, "connect") == 0 && argc == 3)
    return cmd_connect(argv[2]);
  if (strcmp(cmd, "connect-tcp") == 0 && argc == 3)
    return cmd_connect_tcp(argv[2]);
  if (strcmp(cmd, "tcp-self") == 0 && argc == 3)
    return cmd_tcp_self(argv[2]);
  if (strcmp(cmd, "connect-race") == 0 && argc == 5)
    return cmd_connect_race(argv[2], argv[3], argv[4]);
  if (strcmp(cmd, "fd-race") == 0 && argc == 5)
    return cmd_fd_race(argv[2], argv[3], argv[4]);
  if (strcmp(cmd, "connect-tcp-slow") == 0 && argc == 5)
    return cmd_connect_tcp_slow(argv[2], argv[3], argv[4]);
  if (strcmp(cmd, "socket-unix-dgram") == 0)
    return cmd_socket_unix_dgram();
  if (strcmp(cmd, "bind") == 0 && (argc == 3 || argc == 4))
    return cmd_bind(argv[2], argc == 4 ? argv[3] : NULL);
  if (strcmp(cmd, "dirforms") == 0 && argc == 3)
    return cmd_dirforms(argv[2]);
  if (strcmp(cmd, "fifo") == 0 && argc == 3)
    return cmd_fifo(argv[2]);
  if (strcmp(cmd, "mknod") == 0 && argc == 3)
    return cmd_mknod(argv[2]);
  if (strcmp(cmd, "dotdot") == 0 && argc == 3)
    return cmd_dotdot(argv[2]);
  return program_commands(argc, argv);
}

int main(int argc, char **argv) {
  if (argc < 2)
    return usage();
  const char *cmd = argv[1];
  if (strcmp(cmd, "race") == 0)
    return cmd_race(argc, argv);
  if (strcmp(cmd, "read") == 0 && argc == 3)
    return cmd_read(argv[2]);
  if (strcmp(cmd, "write") == 0 && argc == 3)
    return cmd_write(argv[2]);
  if (strcmp(cmd, "mkdir") == 0 && argc == 3)
    return cmd_mkdir(argv[2]);
  if (strcmp(cmd, "mkfifo") == 0 && argc == 3)
    return cmd_mkfifo(argv[2]);
  if (strcmp(cmd, "socket-inet") == 0)
    return cmd_socket_inet();
  if (strcmp(cmd, "socketpair-dgram") == 0)
    return cmd_socketpair_dgram();
  if (strcmp(cmd, "connect-abstract") == 0 && argc == 3)
    return cmd_connect_abstract(argv[2]);
  if (strcmp(cmd, "creds") == 0)
    return cmd_creds();
  if (strcmp(cmd, "session") == 0)
    return cmd_session();
  if (strcmp(cmd, "tiocsti") == 0)
    return cmd_tiocsti();
  if (strcmp(cmd, "selfkill") == 0 && argc == 3)
    return cmd_selfkill(argv[2]);
  if (strcmp(cmd, "wait") == 0)
    return cmd_wait();
  if (strcmp(cmd, "env") == 0 && argc == 3)
    return cmd_env(argv[2]);
  return more_commands(argc, argv);
}
