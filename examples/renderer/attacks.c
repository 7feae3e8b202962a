/* The attack table (see attacks.h). Each operation runs in a sandboxed
 * worker or, as a control, in the host; neither side allocates. */
#include "examples/renderer/attacks.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/io_uring.h>

/* listxattrat(2) arrived in Linux 6.13, after the renderer policy's
 * syscall list was written: the policy knows it only as "not allowed". */
#define DEMO_NR_LISTXATTRAT 465

static long read_file(const char *path) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  char buf[64];
  ssize_t n = read(fd, buf, sizeof buf);
  int saved = errno;
  close(fd);
  errno = saved;
  return n;
}

static long read_secret(const demo_request *t, bool control) {
  return read_file(t->secret_path);
}

static long follow_symlink(const demo_request *t, bool control) {
  return read_file(t->link_path);
}

static long write_outside(const demo_request *t, bool control) {
  int fd = open(t->outside_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0)
    return -1;
  ssize_t n = write(fd, "escaped\n", 8);
  close(fd);
  if (control)
    unlink(t->outside_path);
  return n;
}

static bool outside_untouched(const demo_request *t, char *detail, size_t len) {
  if (access(t->outside_path, F_OK) != 0)
    return true;
  snprintf(detail, len, "%s was created", t->outside_path);
  unlink(t->outside_path);
  return false;
}

static long socket_inet(const demo_request *t, bool control) {
  int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s >= 0)
    close(s);
  return s;
}

static long connect_abstract(const demo_request *t, bool control) {
  int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0)
    return -1;
  struct sockaddr_un addr = {.sun_family = AF_UNIX};
  size_t n = strnlen(t->abstract_name, sizeof t->abstract_name);
  memcpy(addr.sun_path + 1, t->abstract_name, n);
  long rc =
      connect(s, (struct sockaddr *)&addr,
              (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n));
  int saved = errno;
  close(s);
  errno = saved;
  return rc;
}

/* The worker aims at the broker; the host's control at a child of its
 * own (the broker is undumpable, so a host that is not root could not
 * trace it even without a sandbox). */
static long ptrace_broker(const demo_request *t, bool control) {
  if (!control)
    return ptrace(PTRACE_ATTACH, (pid_t)t->broker_pid, NULL, NULL);
  pid_t child = fork();
  if (child < 0)
    return -1;
  if (child == 0) {
    pause();
    _exit(0);
  }
  long rc = ptrace(PTRACE_ATTACH, child, NULL, NULL);
  int saved = errno;
  kill(child, SIGKILL);
  waitpid(child, NULL, 0);
  errno = saved;
  return rc;
}

/* Signal 0 asks whether pid still exists without touching it. */
static bool still_running(pid_t pid, const char *role, char *detail,
                          size_t len) {
  if (kill(pid, 0) == 0)
    return true;
  snprintf(detail, len, "the %s (pid %d) is gone", role, (int)pid);
  return false;
}

static bool broker_alive(const demo_request *t, char *detail, size_t len) {
  return still_running((pid_t)t->broker_pid, "broker", detail, len);
}

static long fork_child(const demo_request *t, bool control) {
  pid_t pid = fork();
  if (pid == 0)
    _exit(0);
  if (pid > 0)
    waitpid(pid, NULL, 0);
  return pid;
}

/* The control sends signal 0: permission is checked, nothing delivered. */
static long kill_zygote(const demo_request *t, bool control) {
  return kill((pid_t)t->zygote_pid, control ? 0 : SIGKILL);
}

static bool zygote_alive(const demo_request *t, char *detail, size_t len) {
  return still_running((pid_t)t->zygote_pid, "zygote", detail, len);
}

/* In the worker a successful exec replaces it, so it never reports: the
 * host counts an unreported clean exit as an escape. */
static long exec_shell(const demo_request *t, bool control) {
  if (!control)
    return execl("/bin/sh", "sh", "-c", "exit 0", (char *)NULL);
  pid_t pid = fork();
  if (pid < 0)
    return -1;
  if (pid == 0) {
    execl("/bin/sh", "sh", "-c", "exit 7", (char *)NULL);
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 7) {
    errno = ENOEXEC;
    return -1;
  }
  return 0;
}

static long unknown_syscall(const demo_request *t, bool control) {
  return syscall(DEMO_NR_LISTXATTRAT, AT_FDCWD, t->secret_path, 0, NULL, 0);
}

/* /proc/self/root leads to "/" of whoever opens it: for the broker that
 * would be the host's root, which is why the broker reads /proc/self as
 * the worker. */
static long proc_root_link(const demo_request *t, bool control) {
  char path[DEMO_PATH_MAX + 32];
  snprintf(path, sizeof path, "/proc/self/root%s", t->secret_path);
  return read_file(path);
}

/* io_uring operations are not system calls, so seccomp never sees them. */
static long io_uring(const demo_request *t, bool control) {
  struct io_uring_params params;
  memset(&params, 0, sizeof params);
  long fd = syscall(__NR_io_uring_setup, 1, &params);
  if (fd >= 0)
    close((int)fd);
  return fd;
}

/* The control unshares in a child, so the host keeps its namespaces. */
static long new_user_namespace(const demo_request *t, bool control) {
  if (!control)
    return unshare(CLONE_NEWUSER);
  pid_t pid = fork();
  if (pid < 0)
    return -1;
  if (pid == 0)
    _exit(unshare(CLONE_NEWUSER) == 0 ? 0 : errno);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    errno = WIFEXITED(status) ? WEXITSTATUS(status) : ECHILD;
    return -1;
  }
  return 0;
}

static const demo_attack attacks[] = {
    {"read-shadow", "open and read /etc/shadow (or a canary)", read_secret},
    {"write-outside-home", "create a file outside its home", write_outside,
     outside_untouched},
    {"symlink-out-of-home", "open a symlink in its home that leads out",
     follow_symlink},
    {"socket-inet", "socket(AF_INET, SOCK_STREAM)", socket_inet},
    {"connect-abstract", "connect to the host's abstract unix socket",
     connect_abstract},
    {"ptrace-broker", "ptrace(PTRACE_ATTACH) the broker", ptrace_broker,
     broker_alive},
    {"fork", "fork() a child process", fork_child},
    {"kill-zygote", "kill(zygote, SIGKILL)", kill_zygote, zygote_alive},
    {"exec-shell", "execve /bin/sh", exec_shell},
    {"unknown-syscall", "listxattrat(2), newer than the policy",
     unknown_syscall, .optional = true},
    {"proc-root-link", "read the secret via /proc/self/root", proc_root_link},
    {"io-uring", "io_uring_setup() (invisible to seccomp)", io_uring,
     .optional = true},
    {"user-namespace", "unshare(CLONE_NEWUSER)", new_user_namespace,
     .optional = true},
};

const demo_attack *demo_attack_find(const char *name) {
  for (size_t i = 0; i < G_N_ELEMENTS(attacks); i++)
    if (!strcmp(attacks[i].name, name))
      return &attacks[i];
  return NULL;
}
