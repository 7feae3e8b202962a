/* The broker client; see client.h.
 *
 * Runs in signal handlers: async-signal-safe calls only, stack buffers
 * only, no GLib. Trusts the broker's replies only after checking magic,
 * version, command, id, sizes and descriptor count.
 */
#include "sandbox/broker/client.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "sandbox/broker/protocol.h"

/* What a worker sees when the broker cannot answer (F1). */
#define BROKER_UNREACHABLE (-EACCES)

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

/* Signal-safe: called from the SIGSYS handler. */
void sbx_broker_client_init(sbx_broker_client *client, int channel_fd) {
  client->channel = channel_fd;
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

/* Signal-safe. One request, one reply, on a reply socket pair of its own. */
static int transact(const sbx_broker_client *client, transaction *t) {
  t->fd = -1;
  t->payload_len = 0;
  if (!t->path || (sbx_broker_command_paths(t->command) == 2 && !t->path2))
    return -EFAULT;
  size_t len1 = strnlen(t->path, PATH_MAX);
  size_t len2 = t->path2 ? strnlen(t->path2, PATH_MAX) : 0;
  if (len1 >= PATH_MAX || len2 >= PATH_MAX)
    return -ENAMETOOLONG;
  if (sbx_broker_check_fields(t->command, t->flags, t->arg) != 0)
    return -EINVAL;

  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
    return -errno;

  sbx_broker_request req;
  memset(&req, 0, sizeof(req));
  req.magic = SBX_BROKER_MAGIC;
  req.version = SBX_BROKER_VERSION;
  req.command = t->command;
  req.id = (uint32_t)sv[0];
  req.flags = t->flags;
  req.arg = t->arg;
  req.path_len = (uint16_t)(len1 + 1);
  req.path2_len = (uint16_t)(t->path2 ? len2 + 1 : 0);
  struct iovec iov[3] = {
      {.iov_base = &req, .iov_len = sizeof(req)},
      {.iov_base = (void *)t->path, .iov_len = len1 + 1},
      {.iov_base = (void *)t->path2, .iov_len = t->path2 ? len2 + 1 : 0},
  };
  union {
    char buf[CMSG_SPACE(sizeof(int))];
    struct cmsghdr align;
  } cbuf;
  memset(&cbuf, 0, sizeof(cbuf));
  struct msghdr msg = {
      .msg_iov = iov,
      .msg_iovlen = t->path2 ? 3 : 2,
      .msg_control = cbuf.buf,
      .msg_controllen = sizeof(cbuf.buf),
  };
  struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  memcpy(CMSG_DATA(c), &sv[1], sizeof(int));
  ssize_t n;
  do {
    n = sendmsg(client->channel, &msg, MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  /* Our copy of the reply end goes now: if the broker dies or drops the
   * request, the last reference vanishes and recvmsg sees end of file. */
  close(sv[1]);
  if (n < 0) {
    int err = errno;
    close(sv[0]);
    return err == EFAULT ? -EFAULT : BROKER_UNREACHABLE;
  }

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
  do {
    n = recvmsg(sv[0], &rmsg, t->cloexec ? MSG_CMSG_CLOEXEC : 0);
  } while (n < 0 && errno == EINTR);
  int err = errno;
  close(sv[0]);
  if (n < 0)
    return err == EFAULT ? -EFAULT : BROKER_UNREACHABLE;
  if (n == 0)
    return BROKER_UNREACHABLE;

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
      rep.version != SBX_BROKER_VERSION || rep.command != t->command ||
      rep.id != req.id || (rmsg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) ||
      n_fds != (has_fd ? 1u : 0u) || (has_fd && (!t->want_fd || rep.result < 0)) ||
      (size_t)n - sizeof(rep) != rep.payload_len) {
    close_fds(&rmsg);
    return -EIO;
  }
  t->fd = fd;
  t->payload_len = rep.payload_len;
  if (t->want_fd && rep.result >= 0 && fd < 0)
    return -EIO;
  return rep.result;
}

/* Signal-safe wrappers: each keeps errno as it found it. */

int sbx_broker_open(const sbx_broker_client *client, const char *path,
                    int flags, mode_t mode) {
  int saved = errno;
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
  errno = saved;
  return rc < 0 ? rc : t.fd;
}

int sbx_broker_access(const sbx_broker_client *client, const char *path,
                      int mode, int at_flags) {
  int saved = errno;
  transaction t = {
      .command = SBX_BROKER_CMD_ACCESS,
      .flags = (uint32_t)mode,
      .arg = (uint32_t)at_flags,
      .path = path,
  };
  int rc = transact(client, &t);
  errno = saved;
  return rc;
}

static int stat_common(const sbx_broker_client *client, uint16_t command,
                       const char *path, struct stat *out) {
  int saved = errno;
  transaction t = {
      .command = command,
      .path = path,
      .payload = out,
      .payload_size = sizeof(*out),
  };
  int rc = transact(client, &t);
  if (rc == 0 && t.payload_len != sizeof(*out))
    rc = -EIO;
  errno = saved;
  return rc;
}

int sbx_broker_stat(const sbx_broker_client *client, const char *path,
                    struct stat *out) {
  return stat_common(client, SBX_BROKER_CMD_STAT, path, out);
}

int sbx_broker_lstat(const sbx_broker_client *client, const char *path,
                     struct stat *out) {
  return stat_common(client, SBX_BROKER_CMD_LSTAT, path, out);
}

int sbx_broker_statx(const sbx_broker_client *client, const char *path,
                     int at_flags, unsigned mask, struct statx *out) {
  int saved = errno;
  transaction t = {
      .command = SBX_BROKER_CMD_STATX,
      .flags = (uint32_t)at_flags,
      .arg = mask,
      .path = path,
      .payload = out,
      .payload_size = sizeof(*out),
  };
  int rc = transact(client, &t);
  if (rc == 0 && t.payload_len != sizeof(*out))
    rc = -EIO;
  errno = saved;
  return rc;
}

ssize_t sbx_broker_readlink(const sbx_broker_client *client, const char *path,
                            char *buf, size_t size) {
  int saved = errno;
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
  errno = saved;
  return rc;
}

static int simple(const sbx_broker_client *client, uint16_t command,
                  const char *path, const char *path2, uint32_t flags,
                  uint32_t arg) {
  int saved = errno;
  transaction t = {
      .command = command,
      .flags = flags,
      .arg = arg,
      .path = path,
      .path2 = path2,
  };
  int rc = transact(client, &t);
  errno = saved;
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
