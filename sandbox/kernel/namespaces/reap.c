/* Reaping with a deadline; see reap.h.
 *
 * A pidfd (pidfd_open(2), Linux 5.3) becomes readable when the process
 * ends, so poll() gives the deadline without a signal handler or a busy
 * loop; without one (an older kernel, no descriptor left) waitpid(WNOHANG)
 * is retried every few milliseconds until the deadline.
 */
#include "sandbox/kernel/namespaces/reap.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* How often the fallback without a pidfd looks again. */
#define REAP_POLL_INTERVAL_MS 5

static long long now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* 1 reaped, 0 still running, -errno. */
static int try_reap(pid_t pid, int *status) {
  int st = 0;
  pid_t r;
  do {
    r = waitpid(pid, &st, WNOHANG);
  } while (r < 0 && errno == EINTR);
  if (r < 0)
    return -errno;
  if (r == 0)
    return 0;
  if (status)
    *status = st;
  return 1;
}

int sbx_reap_child(pid_t pid, int timeout_ms, int *status) {
  int rc = try_reap(pid, status);
  if (rc != 0 || timeout_ms <= 0)
    return rc;
  long long deadline = now_ms() + timeout_ms;
  int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
  for (;;) {
    long long left = deadline - now_ms();
    if (left <= 0)
      break;
    if (pidfd >= 0) {
      struct pollfd p = {.fd = pidfd, .events = POLLIN};
      if (poll(&p, 1, (int)left) < 0 && errno != EINTR)
        break;
    } else {
      struct timespec nap = {0, REAP_POLL_INTERVAL_MS * 1000000L};
      nanosleep(&nap, NULL);
    }
    rc = try_reap(pid, status);
    if (rc != 0)
      break;
  }
  if (pidfd >= 0)
    close(pidfd);
  return rc != 0 ? rc : try_reap(pid, status);
}

int sbx_reap_or_kill_child(pid_t pid, int timeout_ms, int kill_timeout_ms,
                           int *status) {
  int rc = sbx_reap_child(pid, timeout_ms, status);
  if (rc != 0)
    return rc;
  kill(pid, SIGKILL);
  return sbx_reap_child(pid, kill_timeout_ms, status);
}
