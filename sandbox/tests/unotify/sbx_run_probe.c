/* A program for sbx-run's tests to run inside (and, for the positive
 * controls, outside) the sandbox. Each subcommand tries one thing and
 * prints what happened as `key=value` lines on stdout; the exit status
 * says whether the attempt succeeded (0) or was refused (1).
 *
 * It is deliberately an ordinary program: libc only, no sbx code, built
 * without sanitizers (their runtimes read /proc/self/maps, which the
 * sandbox does not serve).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <termios.h>
#include <unistd.h>

static int usage(void) {
  fprintf(stderr,
          "usage: sbx_run_probe race ALLOWED CANARY CANARY_INO N\n"
          "       sbx_run_probe read PATH | write PATH | mkdir PATH\n"
          "       sbx_run_probe socket-inet | socketpair-dgram\n"
          "       sbx_run_probe connect-abstract NAME\n"
          "       sbx_run_probe creds | session | tiocsti | selfkill SIG\n"
          "       sbx_run_probe wait | env NAME\n");
  return 2;
}

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
  int rc = connect(fd, (struct sockaddr *)&sa,
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
  printf("effective=%llx\npermitted=%llx\ninheritable=%llx\nbounding=%llx\n"
         "ambient=%llx\nno_new_privs=%d\nuid=%d\n",
         (unsigned long long)eff, (unsigned long long)prm,
         (unsigned long long)inh, (unsigned long long)bnd,
         (unsigned long long)amb, nnp, (int)getuid());
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
 * command and with junk in the upper half of the 32-bit argument. */
static int cmd_tiocsti(void) {
  if (getsid(0) != getpid())
    setsid();
  int ctty = ioctl(0, TIOCSCTTY, 0);
  printf("ctty=%s\n", ctty == 0 ? "ok" : strerror(errno));
  char c = 'x';
  int rc = (int)syscall(SYS_ioctl, 0, (unsigned long)TIOCSTI, &c);
  printf("tiocsti=%s\n", rc == 0 ? "ok" : strerror(errno));
  int rc2 = (int)syscall(SYS_ioctl, 0,
                         (unsigned long)TIOCSTI | (1ul << 32), &c);
  printf("tiocsti_junk=%s\n", rc2 == 0 ? "ok" : strerror(errno));
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
  return usage();
}
