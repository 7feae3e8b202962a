/* Descriptor hygiene for a freshly forked sandboxed process. Child-side
 * and async-signal-safe: close_range(2) or close(), fcntl(), a fixed-size
 * keep list on the stack. Trusts nothing it inherited; refuses a keep list
 * it cannot honour exactly. */
#include "sandbox/kernel/namespaces/fds.h"

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
 * (POLLNVAL marks a number that is not open; any other answer means the
 * kernel found a file there), and fcntl(F_GETFD) asks for each number
 * only when poll itself fails. One fcntl per number costs about
 * a microsecond here, so a 20000-fd limit would cost 20 ms per spawn;
 * the sweep costs a few nanoseconds per number. poll(2) answers POLLNVAL
 * for an O_PATH descriptor too, so the sweep does not see those: the
 * layout check below relies on close_range and an exact walk instead. */
static int sweep(long limit, int (*found)(int fd, void *ctx), void *ctx) {
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
      if (rc >= 0 ? (batch[i].revents & POLLNVAL) != 0 : !is_open(fd))
        continue;
      int r = found(fd, ctx);
      if (r)
        return r;
    }
  }
  return 0;
}

/* Closes every fd in [lo, hi] (hi inclusive). True when close_range(2)
 * did it, which is the kernel's word that none in the span is open; the
 * close() fallback only reaches the soft limit. */
static bool close_span(unsigned lo, unsigned hi, long limit) {
  if (lo > hi)
    return true;
  if (syscall(__NR_close_range, lo, hi, 0) == 0)
    return true;
  for (long fd = lo; fd <= (long)hi && fd < limit; fd++)
    close((int)fd);
  return false;
}

static int verify_below(long limit, const int *keep, size_t n_keep, int *stray);

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
    if (keep[i].fd > high)
      high = keep[i].fd;
    if (final[i] > high)
      high = final[i];
  }
  /* Park a source that is another entry's target above every source and
   * target first, so that no dup onto a target clobbers it. Other sources
   * move straight to their targets. */
  for (size_t i = 0; i < n_keep; i++) {
    bool clobbered = false;
    for (size_t j = 0; j < n_keep && !clobbered; j++)
      clobbered = j != i && final[j] == keep[i].fd;
    if (!clobbered)
      continue;
    int tmp = fcntl(keep[i].fd, F_DUPFD_CLOEXEC, high + 1);
    if (tmp < 0)
      return -errno;
    keep[i].fd = tmp;
  }
  /* dup3 sets the close-on-exec flag of a moved fd; only one that stays
   * needs F_SETFD. A closed source fails here with EBADF. */
  for (size_t i = 0; i < n_keep; i++) {
    if (final[i] != keep[i].fd) {
      if (dup3(keep[i].fd, final[i], keep[i].cloexec ? O_CLOEXEC : 0) < 0)
        return -errno;
      keep[i].fd = final[i];
    } else if (fcntl(final[i], F_SETFD, keep[i].cloexec ? FD_CLOEXEC : 0) !=
               0) {
      return -errno;
    }
  }
  /* Close the gaps between the sorted finals, then everything above. */
  unsigned next = 0;
  bool by_kernel = true;
  for (;;) {
    int lowest = -1;
    for (size_t i = 0; i < n_keep; i++)
      if ((unsigned) final[i] >= next && (lowest < 0 || final[i] < lowest))
        lowest = final[i];
    if (lowest < 0)
      break;
    if ((unsigned)lowest > next)
      by_kernel &= close_span(next, (unsigned)lowest - 1, limit);
    next = (unsigned)lowest + 1;
  }
  by_kernel &= close_span(next, ~0u, limit);
  /* After close_range nothing at or above `next` can be open, so the
   * check covers [0, next) only, one fcntl per number (exact, O_PATH
   * descriptors included). Otherwise every number up to the limit. */
  int stray;
  return verify_below(by_kernel ? (long)next : limit, final, n_keep, &stray);
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

#define EXACT_WALK_MAX 64

/* Checks [0, limit): a short range with one fcntl per number, a long one
 * with the poll sweep. Async-signal-safe. */
static int verify_below(long limit, const int *keep, size_t n_keep,
                        int *stray) {
  for (size_t i = 0; i < n_keep; i++) {
    if (keep[i] < 0 || !is_open(keep[i])) {
      if (stray)
        *stray = keep[i];
      return -EBADF;
    }
  }
  verify_ctx c = {keep, n_keep, stray};
  if (limit > EXACT_WALK_MAX)
    return sweep(limit, check_kept, &c);
  for (int fd = 0; fd < limit; fd++) {
    bool kept = false;
    for (size_t i = 0; i < n_keep && !kept; i++)
      kept = keep[i] == fd;
    if (!kept && is_open(fd))
      return check_kept(fd, &c);
  }
  return 0;
}

int sbx_fd_verify_only_raw(const int *keep, size_t n_keep, int *stray) {
  return verify_below(nofile_soft(), keep, n_keep, stray);
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
  sweep(nofile_soft(), add_open, &c);
  return c.n;
}
