/* Descriptor hygiene for a freshly forked sandboxed process. Child-side
 * and async-signal-safe: close_range(2) or close(), fcntl(), a fixed-size
 * keep list on the stack. Trusts nothing it inherited; refuses a keep list
 * it cannot honour exactly. */
#include "sandbox/linux/namespaces/fds.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef __NR_close_range
#define __NR_close_range 436
#endif

static long nofile_soft(void) {
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY ||
      rl.rlim_cur > (rlim_t)(1 << 30))
    return 1 << 20; /* the kernel's default nr_open */
  return (long)rl.rlim_cur;
}

static bool is_open(int fd) {
  return fcntl(fd, F_GETFD) != -1 || errno != EBADF;
}

#define SWEEP_BATCH 256

/* Calls found(fd, ctx) for every open fd below the soft RLIMIT_NOFILE, in
 * increasing order; stops early when found returns nonzero and returns
 * that. Every number is checked: poll(2) sweeps a batch in one syscall
 * (POLLNVAL marks a number that is not open), and each number it reports
 * open is confirmed with fcntl(F_GETFD). One fcntl per number costs about
 * a microsecond here, so a 20000-fd limit would cost 20 ms per spawn;
 * the sweep costs a few nanoseconds per number. */
static int sweep(int (*found)(int fd, void *ctx), void *ctx) {
  long limit = nofile_soft();
  struct pollfd batch[SWEEP_BATCH];
  long step = limit < SWEEP_BATCH ? limit : SWEEP_BATCH;
  for (long base = 0; base < limit; base += step) {
    long n = limit - base < step ? limit - base : step;
    for (long i = 0; i < n; i++) {
      batch[i].fd = (int)(base + i);
      batch[i].events = 0;
      batch[i].revents = 0;
    }
    int rc;
    do {
      rc = poll(batch, (nfds_t)n, 0);
    } while (rc < 0 && errno == EINTR);
    for (long i = 0; i < n; i++) {
      int fd = (int)(base + i);
      /* On a poll failure, fall back to fcntl for every number. */
      if (rc >= 0 && (batch[i].revents & POLLNVAL))
        continue;
      if (!is_open(fd))
        continue;
      int r = found(fd, ctx);
      if (r)
        return r;
    }
  }
  return 0;
}

/* Closes every fd in [lo, hi] (hi inclusive). */
static void close_span(unsigned lo, unsigned hi) {
  if (lo > hi)
    return;
  if (syscall(__NR_close_range, lo, hi, 0) == 0)
    return;
  long limit = nofile_soft();
  for (long fd = lo; fd <= (long)hi && fd < limit; fd++)
    close((int)fd);
}

int sbx_fd_keep_only_raw(sbx_fd_keep *keep, size_t n_keep) {
  if (n_keep > SBX_FD_KEEP_MAX)
    return -EINVAL;
  long limit = nofile_soft();
  int final[SBX_FD_KEEP_MAX];
  int high = 0;
  for (size_t i = 0; i < n_keep; i++) {
    if (keep[i].fd < 0 || keep[i].target < SBX_FD_SAME)
      return -EINVAL;
    final[i] = keep[i].target == SBX_FD_SAME ? keep[i].fd : keep[i].target;
    if (final[i] >= limit)
      return -EINVAL;
    for (size_t j = 0; j < i; j++)
      if (final[j] == final[i])
        return -EINVAL;
    if (!is_open(keep[i].fd))
      return -EBADF;
    if (keep[i].fd > high)
      high = keep[i].fd;
    if (final[i] > high)
      high = final[i];
  }
  /* Park every moved fd above all sources and targets first, so that no
   * dup onto a target can clobber another entry's source. */
  for (size_t i = 0; i < n_keep; i++) {
    if (final[i] == keep[i].fd)
      continue;
    int tmp = fcntl(keep[i].fd, F_DUPFD_CLOEXEC, high + 1);
    if (tmp < 0)
      return -errno;
    keep[i].fd = tmp;
  }
  for (size_t i = 0; i < n_keep; i++) {
    if (final[i] != keep[i].fd) {
      if (dup3(keep[i].fd, final[i], O_CLOEXEC) < 0)
        return -errno;
      keep[i].fd = final[i];
    }
    if (fcntl(final[i], F_SETFD, keep[i].cloexec ? FD_CLOEXEC : 0) != 0)
      return -errno;
  }
  /* Close the gaps between the sorted finals, then everything above. */
  unsigned next = 0;
  for (;;) {
    int lowest = -1;
    for (size_t i = 0; i < n_keep; i++)
      if ((unsigned) final[i] >= next && (lowest < 0 || final[i] < lowest))
        lowest = final[i];
    if (lowest < 0)
      break;
    if ((unsigned)lowest > next)
      close_span(next, (unsigned)lowest - 1);
    next = (unsigned)lowest + 1;
  }
  close_span(next, ~0u);
  int stray;
  return sbx_fd_verify_only_raw(final, n_keep, &stray);
}

typedef struct {
  const int *keep;
  size_t n_keep;
  int *stray;
} verify_ctx;

static int check_kept(int fd, void *p) {
  verify_ctx *c = p;
  for (size_t i = 0; i < c->n_keep; i++)
    if (c->keep[i] == fd)
      return 0;
  if (c->stray)
    *c->stray = fd;
  return -ENOTRECOVERABLE;
}

int sbx_fd_verify_only_raw(const int *keep, size_t n_keep, int *stray) {
  for (size_t i = 0; i < n_keep; i++) {
    if (keep[i] < 0 || !is_open(keep[i])) {
      if (stray)
        *stray = keep[i];
      return -EBADF;
    }
  }
  verify_ctx c = {keep, n_keep, stray};
  return sweep(check_kept, &c);
}

typedef struct {
  int *out;
  size_t cap;
  int n;
} list_ctx;

static int add_open(int fd, void *p) {
  list_ctx *c = p;
  if ((size_t)c->n < c->cap)
    c->out[c->n] = fd;
  c->n++;
  return 0;
}

int sbx_fd_list_open_raw(int *out, size_t cap) {
  list_ctx c = {out, cap, 0};
  sweep(add_open, &c);
  return c.n;
}
