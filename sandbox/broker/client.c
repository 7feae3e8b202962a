/* The broker client; see client.h.
 *
 * Runs in signal handlers: async-signal-safe calls only, stack buffers
 * only, no GLib; the reply-channel pool is claimed with atomic exchanges,
 * never a lock. Trusts the broker's replies only after checking magic,
 * version, command, id, sizes and descriptor count.
 */
#include "sandbox/broker/client.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "sandbox/broker/protocol.h"

/* What a worker sees when the broker is gone (F1), and when it is alive
 * but could not take the request for lack of descriptors (F4). */
#define BROKER_UNREACHABLE (-EACCES)
#define BROKER_OUT_OF_FDS (-ENFILE)

/* Requests served by fresh pairs after the broker refused a thread channel
 * before asking again. */
#define REFUSED_BACKOFF 64

enum { SLOT_EMPTY, SLOT_FREE, SLOT_BUSY };

typedef struct {
  uint16_t command;
  uint32_t flags;
  uint32_t arg;
  const char *path;
  const char *path2;
  void *payload; /* where the reply's payload goes, or NULL */
  size_t payload_size;
  bool want_fd;
  bool cloexec;
  /* out */
  size_t payload_len;
  int fd;
} transaction;

/* Which process a pooled channel belongs to, without a system call per
 * request: a page that fork() hands to the child zeroed
 * (MADV_WIPEONFORK) holds this process's generation, a number no
 * ancestor's slot carries; a slot records the generation it was
 * registered in. A child of fork() finds the page zeroed, takes a new
 * generation, and so never uses (it closes) the channels it inherited.
 * The page is mapped by the first init, normally in the host before any
 * filter, and inherited (zeroed) by every process forked from it; where
 * it could not be mapped, slots compare getpid() instead. A vfork child
 * shares the page and its parent's memory: it may use the parent's
 * channels while the parent waits, as the parent would. */
static unsigned *fork_page;
static unsigned last_generation; /* not wiped: a child counts on from it */
#define FORK_PAGE_SIZE 4096

/* Signal-safe. */
static void map_fork_page(void) {
  if (__atomic_load_n(&fork_page, __ATOMIC_ACQUIRE))
    return;
  long p = syscall(SYS_mmap, NULL, FORK_PAGE_SIZE, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == -1 || (void *)p == MAP_FAILED)
    return;
  unsigned *expected = NULL;
  if (syscall(SYS_madvise, p, FORK_PAGE_SIZE, MADV_WIPEONFORK) != 0 ||
      !__atomic_compare_exchange_n(&fork_page, &expected, (unsigned *)p, false,
                                   __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
    syscall(SYS_munmap, p, FORK_PAGE_SIZE);
}

/* Signal-safe. This process's generation (never 0), or 0 when there is
 * no page. */
static unsigned generation(void) {
  unsigned *page = __atomic_load_n(&fork_page, __ATOMIC_ACQUIRE);
  if (!page)
    return 0;
  unsigned g = __atomic_load_n(page, __ATOMIC_ACQUIRE);
  if (g)
    return g;
  unsigned fresh = __atomic_add_fetch(&last_generation, 1, __ATOMIC_RELAXED);
  if (fresh == 0)
    fresh = __atomic_add_fetch(&last_generation, 1, __ATOMIC_RELAXED);
  unsigned expected = 0;
  if (__atomic_compare_exchange_n(page, &expected, fresh, false,
                                  __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
    return fresh;
  return expected; /* another thread of this process took one first */
}

/* Signal-safe: called from the SIGSYS handler. */
void sbx_broker_client_init(sbx_broker_client *client, int channel_fd) {
  memset(client, 0, sizeof(*client));
  client->channel = channel_fd;
  map_fork_page();
}

static void close_fds(const struct msghdr *msg) {
  for (const struct cmsghdr *c = CMSG_FIRSTHDR(msg); c;
       c = CMSG_NXTHDR((struct msghdr *)msg, (struct cmsghdr *)c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
      continue;
    size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < n; i++) {
      int fd;
      memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
      close(fd);
    }
  }
}

/* Signal-safe. Is the broker still there? Its end of the channel would
 * have gone with it: a peek then sees end of file. */
static int unreachable(const sbx_broker_client *client) {
  char b;
  struct iovec iov = {.iov_base = &b, .iov_len = 1};
  struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
  ssize_t n = recvmsg(client->channel, &msg, MSG_PEEK | MSG_DONTWAIT);
  return n < 0 && errno == EAGAIN ? BROKER_OUT_OF_FDS : BROKER_UNREACHABLE;
}

/* Signal-safe. fstat(2) itself: glibc's fstat() may be newfstatat, which
 * layer 1 traps. */
static int raw_fstat(int fd, struct stat *st) {
  return syscall(SYS_fstat, fd, st) == 0 ? 0 : -1;
}

typedef enum {
  SENT_REPLIED, /* the result is the broker's answer */
  SENT_LOST,    /* no answer (transport failure): the channel is unusable */
} exchange_status;

/* Waiting for a reply by polling before sleeping. A worker that sleeps
 * while the broker answers is woken by an interrupt to its CPU; on a
 * virtual machine whose idle vCPUs halt, that wake-up costs tens of
 * microseconds, more than the broker's work. A pooled channel therefore
 * polls for its reply (recvmsg with MSG_DONTWAIT, a call the handler
 * already needs; about half a microsecond each) up to `spin` times before
 * it sleeps, and learns how long to poll from the replies it gets: a
 * reply found by polling sets the budget to twice the polls it took
 * (within SPIN_MIN..SPIN_MAX), a reply that had to be slept for halves
 * it. Where polling never pays (the broker shares the worker's CPU, or is
 * busy with others) the budget falls to 0, and one request in
 * SPIN_PROBE_EVERY polls in full again to find out whether that changed:
 * learning then costs about a poll per request. One thread of a client
 * polls at a time, the others sleep at once: where many threads wait
 * for replies, their polls would take the CPUs the broker and the
 * threads being answered need. The client's `polling` holds the poller's
 * process generation (1 where there is no fork page): a child forked
 * while a thread of its parent polled finds another generation there,
 * a mark no thread of its own will clear, and takes it over. */
#define SPIN_MAX 64u
#define SPIN_MIN 16u
#define SPIN_PROBE_EVERY 128u

/* Signal-safe. The polls this request may make on the slot's channel. */
static unsigned spin_budget(sbx_broker_client_slot *slot) {
  if (slot->spin > 0)
    return slot->spin;
  if (++slot->unspun < SPIN_PROBE_EVERY)
    return 0;
  slot->unspun = 0;
  return SPIN_MAX;
}

/* Signal-safe. What the budget becomes after a request that polled
 * `polls` times of `budget`, having found its reply by polling or not. */
static void spin_learn(sbx_broker_client_slot *slot, unsigned budget,
                       unsigned polls, bool found) {
  if (found) {
    unsigned want = 2 * polls;
    slot->spin = want < SPIN_MIN ? SPIN_MIN : want > SPIN_MAX ? SPIN_MAX : want;
  } else {
    slot->spin = budget / 2 < SPIN_MIN / 4 ? 0 : budget / 2;
  }
}

/* Signal-safe. Whether this thread may poll: no other thread of this
 * process is polling (see SPIN_MAX). */
static bool take_polling(sbx_broker_client *client) {
  unsigned gen = generation();
  unsigned mine = gen ? gen : 1;
  unsigned seen = 0;
  if (__atomic_compare_exchange_n(&client->polling, &seen, mine, false,
                                  __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
    return true;
  /* Another generation's mark: a thread of an ancestor, gone here. */
  return gen && seen != mine &&
         __atomic_compare_exchange_n(&client->polling, &seen, mine, false,
                                     __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

/* Signal-safe. recvmsg of the reply on a channel whose reply is on its
 * way, polling for it first as `slot` has learnt (see SPIN_MAX; slot
 * NULL, or another thread polling: it sleeps at once). A poll that fails
 * otherwise than "nothing yet" ends the polling and the blocking receive
 * gives the answer: a worker's filter that refuses MSG_DONTWAIT then
 * costs a poll, not the reply. */
static ssize_t receive_reply(sbx_broker_client *client,
                             sbx_broker_client_slot *slot, int fd,
                             struct msghdr *msg, int flags) {
  unsigned budget = slot ? spin_budget(slot) : 0;
  if (budget && !take_polling(client))
    budget = 0;
  ssize_t n = -1;
  unsigned polls = 0;
  bool found = false;
  while (polls < budget && !found) {
    polls++;
    n = recvmsg(fd, msg, flags | MSG_DONTWAIT);
    found = n >= 0;
    if (!found && errno != EAGAIN && errno != EINTR)
      break;
  }
  if (budget) {
    __atomic_store_n(&client->polling, 0, __ATOMIC_RELEASE);
    spin_learn(slot, budget, polls, found);
  }
  if (found)
    return n;
  do {
    n = recvmsg(fd, msg, flags);
  } while (n < 0 && errno == EINTR);
  return n;
}

/* Signal-safe. Sends `req` and the paths on send_fd (passing pass_fd in
 * SCM_RIGHTS when >= 0), then reads one reply on recv_fd and checks it,
 * polling for it as `slot` has learnt (NULL: sleeps at once). Returns the
 * result, with *status saying whether the broker answered. */
static int exchange(const sbx_broker_client *client, int send_fd, int pass_fd,
                    int recv_fd, sbx_broker_client_slot *slot,
                    const sbx_broker_request *req, transaction *t,
                    exchange_status *status) {
  *status = SENT_LOST;
  size_t len1 = req->path_len, len2 = req->path2_len;
  struct iovec iov[3] = {
      {.iov_base = (void *)req, .iov_len = sizeof(*req)},
      {.iov_base = (void *)t->path, .iov_len = len1},
      {.iov_base = (void *)t->path2, .iov_len = len2},
  };
  sbx_broker_fd_cmsg cbuf;
  struct msghdr msg = {
      .msg_iov = iov,
      .msg_iovlen = len2   ? 3
                    : len1 ? 2
                           : 1,
  };
  if (pass_fd >= 0)
    sbx_broker_msg_attach_fd(&msg, &cbuf, pass_fd);
  ssize_t n;
  do {
    n = sendmsg(send_fd, &msg, MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  /* Our copy of a passed reply end goes now: if the broker dies or drops
   * the request, the last reference vanishes and recvmsg sees end of
   * file. */
  if (pass_fd >= 0)
    close(pass_fd);
  if (n < 0)
    return errno == EFAULT ? -EFAULT : unreachable(client);

  sbx_broker_reply rep;
  memset(&rep, 0, sizeof(rep));
  struct iovec riov[2] = {
      {.iov_base = &rep, .iov_len = sizeof(rep)},
      {.iov_base = t->payload, .iov_len = t->payload ? t->payload_size : 0},
  };
  union {
    char buf[CMSG_SPACE(2 * sizeof(int))];
    struct cmsghdr align;
  } rbuf;
  struct msghdr rmsg = {
      .msg_iov = riov,
      .msg_iovlen = t->payload ? 2 : 1,
      .msg_control = rbuf.buf,
      .msg_controllen = sizeof(rbuf.buf),
  };
  /* The pool is the client's own bookkeeping (see transact_once). */
  n = receive_reply((sbx_broker_client *)client, slot, recv_fd, &rmsg,
                    t->cloexec ? MSG_CMSG_CLOEXEC : 0);
  if (n < 0)
    return errno == EFAULT ? -EFAULT : unreachable(client);
  if (n == 0)
    return unreachable(client);

  int fd = -1;
  size_t n_fds = 0;
  for (struct cmsghdr *rc = CMSG_FIRSTHDR(&rmsg); rc;
       rc = CMSG_NXTHDR(&rmsg, rc)) {
    if (rc->cmsg_level == SOL_SOCKET && rc->cmsg_type == SCM_RIGHTS) {
      n_fds += (rc->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      if (n_fds == 1)
        memcpy(&fd, CMSG_DATA(rc), sizeof(int));
    }
  }
  bool has_fd = (rep.flags & SBX_BROKER_REPLY_HAS_FD) != 0;
  if ((size_t)n < sizeof(rep) || rep.magic != SBX_BROKER_MAGIC ||
      rep.version != SBX_BROKER_VERSION || rep.command != req->command ||
      rep.id != req->id || (size_t)n - sizeof(rep) != rep.payload_len ||
      (rmsg.msg_flags & MSG_TRUNC)) {
    close_fds(&rmsg);
    return -EIO;
  }
  *status = SENT_REPLIED;
  if (has_fd && n_fds == 0 && (rmsg.msg_flags & MSG_CTRUNC))
    return -EMFILE; /* the descriptor did not fit in this process */
  if ((rmsg.msg_flags & MSG_CTRUNC) || n_fds != (has_fd ? 1u : 0u) ||
      (has_fd && (!t->want_fd || rep.result < 0))) {
    close_fds(&rmsg);
    return -EIO;
  }
  t->fd = fd;
  t->payload_len = rep.payload_len;
  if (t->want_fd && rep.result >= 0 && fd < 0)
    return -EIO;
  return rep.result;
}

static void fill_header(sbx_broker_request *req, uint16_t command,
                        uint32_t id) {
  memset(req, 0, sizeof(*req));
  req->magic = SBX_BROKER_MAGIC;
  req->version = SBX_BROKER_VERSION;
  req->command = command;
  req->id = id;
}

int sbx_broker_send_listener(const sbx_broker_client *client, int listener_fd) {
  sbx_broker_request req;
  fill_header(&req, SBX_BROKER_LISTENER, 0);
  req.arg = (uint32_t)getpid();
  struct iovec iov = {.iov_base = &req, .iov_len = sizeof req};
  sbx_broker_fd_cmsg cbuf;
  struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
  sbx_broker_msg_attach_fd(&msg, &cbuf, listener_fd);
  ssize_t n;
  do {
    n = sendmsg(client->channel, &msg, MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  return n == (ssize_t)sizeof req ? 0 : n < 0 ? -errno : -EIO;
}

/* Signal-safe. One request on a socket pair made for it alone. */
static int transact_fresh(const sbx_broker_client *client,
                          sbx_broker_request *req, transaction *t) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
    return errno == EMFILE || errno == ENFILE ? -errno : -ENOMEM;
  req->id = (uint32_t)sv[0];
  exchange_status st;
  int rc = exchange(client, client->channel, sv[1], sv[0], NULL, req, t, &st);
  close(sv[0]);
  return rc;
}

/* Signal-safe. A pooled channel outlives the call that made it, so it
 * moves to the upper half of the descriptor table: the low numbers a
 * program expects to get back (dup2 targets, "lowest free descriptor")
 * stay as they would be without the broker. Keeps fd where it is if that
 * fails. */
static int move_high(int fd) {
  struct rlimit lim;
  if (syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, NULL, &lim) != 0 ||
      lim.rlim_cur == RLIM_INFINITY || lim.rlim_cur < 64)
    return fd;
  int high = fcntl(fd, F_DUPFD_CLOEXEC, (int)(lim.rlim_cur / 2));
  if (high < 0)
    return fd;
  close(fd);
  return high;
}

/* Signal-safe. Registers a new thread channel for `slot` (held busy by
 * the caller). Returns true when the broker took it. */
static bool attach(sbx_broker_client *client, sbx_broker_client_slot *slot) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
    return false;
  sbx_broker_request req;
  fill_header(&req, SBX_BROKER_ATTACH, 0);
  transaction t = {.command = SBX_BROKER_ATTACH};
  t.fd = -1;
  exchange_status st;
  int rc = exchange(client, client->channel, sv[1], sv[0], NULL, &req, &t, &st);
  struct stat s;
  if (rc != 0 || raw_fstat(sv[0], &s) != 0) {
    close(sv[0]);
    __atomic_store_n(&client->refused, REFUSED_BACKOFF, __ATOMIC_RELAXED);
    return false;
  }
  slot->fd = move_high(sv[0]);
  slot->ino = (unsigned long long)s.st_ino;
  slot->spin = SPIN_MAX;
  slot->unspun = 0;
  slot->generation = generation();
  slot->pid = slot->generation ? 0 : (int)getpid();
  return true;
}

/* Signal-safe. Is the slot's descriptor still the channel this process
 * registered? A forked child closes its copy (it would share the parent's
 * replies); a number the program closed and reused is forgotten. One
 * fstat: the generation is a read of memory. */
static bool slot_usable(sbx_broker_client_slot *slot) {
  struct stat s;
  bool same = raw_fstat(slot->fd, &s) == 0 && S_ISSOCK(s.st_mode) &&
              (unsigned long long)s.st_ino == slot->ino;
  bool mine = slot->generation ? slot->generation == generation()
                               : slot->pid == (int)getpid();
  if (same && mine)
    return true;
  if (same)
    close(slot->fd);
  slot->fd = -1;
  return false;
}

/* Signal-safe. Claims a slot with a registered channel, registering one
 * in an empty slot if need be; NULL when every slot is busy or the broker
 * refused. */
static sbx_broker_client_slot *claim(sbx_broker_client *client) {
  for (int pass = 0; pass < 2; pass++) {
    int from = pass == 0 ? SLOT_FREE : SLOT_EMPTY;
    for (size_t i = 0; i < SBX_BROKER_CLIENT_POOL; i++) {
      sbx_broker_client_slot *slot = &client->pool[i];
      int expected = from;
      if (__atomic_load_n(&slot->state, __ATOMIC_RELAXED) != from ||
          !__atomic_compare_exchange_n(&slot->state, &expected, SLOT_BUSY,
                                       false, __ATOMIC_ACQUIRE,
                                       __ATOMIC_RELAXED))
        continue;
      if (from == SLOT_FREE && slot_usable(slot))
        return slot;
      unsigned refused = __atomic_load_n(&client->refused, __ATOMIC_RELAXED);
      if (refused > 0) {
        __atomic_compare_exchange_n(&client->refused, &refused, refused - 1,
                                    false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
      } else if (attach(client, slot)) {
        return slot;
      }
      __atomic_store_n(&slot->state, SLOT_EMPTY, __ATOMIC_RELEASE);
      return NULL;
    }
  }
  return NULL;
}

/* Signal-safe. One request, one reply, on a reply channel it holds
 * alone. */
static int transact_once(const sbx_broker_client *cclient, transaction *t) {
  /* The pool is the client's own bookkeeping; callers never define a
   * client const (sbx_broker_client_init writes it). */
  sbx_broker_client *client = (sbx_broker_client *)cclient;
  t->fd = -1;
  t->payload_len = 0;
  if (!t->path || (sbx_broker_command_paths(t->command) == 2 && !t->path2))
    return -EFAULT;
  size_t len1 = strnlen(t->path, PATH_MAX);
  size_t len2 = t->path2 ? strnlen(t->path2, PATH_MAX) : 0;
  if (len1 >= PATH_MAX || len2 >= PATH_MAX)
    return -ENAMETOOLONG;
  /* The decoder's own question: what it would refuse is never sent. */
  if (sbx_broker_command_refusal(t->command, t->path2 ? 2 : 1, t->flags,
                                 t->arg))
    return -EINVAL;

  sbx_broker_request req;
  fill_header(&req, t->command, 0);
  req.flags = t->flags;
  req.arg = t->arg;
  req.path_len = (uint16_t)(len1 + 1);
  req.path2_len = (uint16_t)(t->path2 ? len2 + 1 : 0);

  sbx_broker_client_slot *slot = claim(client);
  if (!slot)
    return transact_fresh(client, &req, t);
  req.id = ++slot->seq;
  exchange_status st;
  int rc = exchange(client, slot->fd, -1, slot->fd, slot, &req, t, &st);
  if (st != SENT_REPLIED) {
    /* A reply may still arrive later: never reuse this channel. */
    close(slot->fd);
    slot->fd = -1;
  }
  __atomic_store_n(&slot->state, slot->fd >= 0 ? SLOT_FREE : SLOT_EMPTY,
                   __ATOMIC_RELEASE);
  return rc;
}

/* Signal-safe: transact_once, keeping errno as it found it (a trapped
 * call's caller must see only the result). */
static int transact(const sbx_broker_client *client, transaction *t) {
  int saved = errno;
  int rc = transact_once(client, t);
  errno = saved;
  return rc;
}

/* Signal-safe wrappers. */

int sbx_broker_open(const sbx_broker_client *client, const char *path,
                    int flags, mode_t mode) {
  transaction t = {
      .command = SBX_BROKER_CMD_OPEN,
      .flags = (uint32_t)flags,
      .arg = ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE)
                 ? (uint32_t)(mode & 07777)
                 : 0,
      .path = path,
      .want_fd = true,
      .cloexec = (flags & O_CLOEXEC) != 0,
  };
  int rc = transact(client, &t);
  return rc < 0 ? rc : t.fd;
}

static int simple(const sbx_broker_client *client, uint16_t command,
                  const char *path, const char *path2, uint32_t flags,
                  uint32_t arg) {
  transaction t = {
      .command = command,
      .flags = flags,
      .arg = arg,
      .path = path,
      .path2 = path2,
  };
  return transact(client, &t);
}

int sbx_broker_access(const sbx_broker_client *client, const char *path,
                      int mode, int at_flags) {
  return simple(client, SBX_BROKER_CMD_ACCESS, path, NULL, (uint32_t)mode,
                (uint32_t)at_flags);
}

/* stat, lstat and statx: a fixed-size structure comes back. */
static int stat_common(const sbx_broker_client *client, uint16_t command,
                       const char *path, uint32_t flags, uint32_t arg,
                       void *out, size_t size) {
  transaction t = {
      .command = command,
      .flags = flags,
      .arg = arg,
      .path = path,
      .payload = out,
      .payload_size = size,
  };
  int rc = transact(client, &t);
  if (rc == 0 && t.payload_len != size)
    rc = -EIO;
  return rc;
}

int sbx_broker_stat(const sbx_broker_client *client, const char *path,
                    struct stat *out) {
  return stat_common(client, SBX_BROKER_CMD_STAT, path, 0, 0, out,
                     sizeof(*out));
}

int sbx_broker_lstat(const sbx_broker_client *client, const char *path,
                     struct stat *out) {
  return stat_common(client, SBX_BROKER_CMD_LSTAT, path, 0, 0, out,
                     sizeof(*out));
}

int sbx_broker_statx(const sbx_broker_client *client, const char *path,
                     int at_flags, unsigned mask, struct statx *out) {
  return stat_common(client, SBX_BROKER_CMD_STATX, path, (uint32_t)at_flags,
                     mask, out, sizeof(*out));
}

ssize_t sbx_broker_readlink(const sbx_broker_client *client, const char *path,
                            char *buf, size_t size) {
  if (size == 0)
    return -EINVAL;
  if (size > SBX_BROKER_MAX_PAYLOAD)
    size = SBX_BROKER_MAX_PAYLOAD;
  transaction t = {
      .command = SBX_BROKER_CMD_READLINK,
      .arg = (uint32_t)size,
      .path = path,
      .payload = buf,
      .payload_size = size,
  };
  int rc = transact(client, &t);
  if (rc >= 0 && (size_t)rc != t.payload_len)
    rc = -EIO;
  return rc;
}

int sbx_broker_mkdir(const sbx_broker_client *client, const char *path,
                     mode_t mode) {
  return simple(client, SBX_BROKER_CMD_MKDIR, path, NULL, 0,
                (uint32_t)(mode & 07777));
}

int sbx_broker_rmdir(const sbx_broker_client *client, const char *path) {
  return simple(client, SBX_BROKER_CMD_RMDIR, path, NULL, 0, 0);
}

int sbx_broker_unlink(const sbx_broker_client *client, const char *path) {
  return simple(client, SBX_BROKER_CMD_UNLINK, path, NULL, 0, 0);
}

int sbx_broker_rename(const sbx_broker_client *client, const char *from,
                      const char *to, unsigned flags) {
  return simple(client, SBX_BROKER_CMD_RENAME, from, to, flags, 0);
}
