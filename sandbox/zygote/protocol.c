/* The host <-> zygote wire protocol: see protocol.h. Async-signal-safe
 * throughout; no allocation. */
#include "sandbox/zygote/protocol.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

/* Room for the most descriptors either side accepts, plus credentials. */
#define CONTROL_LEN                                     \
  (CMSG_SPACE(sizeof(int) * (SBX_ZYGOTE_MAX_FDS + 2)) + \
   CMSG_SPACE(sizeof(struct ucred)))

int sbx_zygote_send(int sock, uint32_t type, uint32_t request_id,
                    const void *body, size_t body_len, const int *fds,
                    size_t n_fds, pid_t cred_pid) {
  if (n_fds > SBX_ZYGOTE_MAX_FDS + 2 || body_len > SBX_ZYGOTE_MAX_MESSAGE)
    return -EINVAL;
  sbx_zygote_header header = {
      .magic = SBX_ZYGOTE_MAGIC,
      .type = type,
      .request_id = request_id,
      .body_len = (uint32_t)body_len,
  };
  struct iovec iov[2] = {
      {.iov_base = &header, .iov_len = sizeof header},
      {.iov_base = (void *)body, .iov_len = body_len},
  };
  union {
    char buf[CONTROL_LEN];
    struct cmsghdr align;
  } control;
  memset(&control, 0, sizeof control);
  struct msghdr msg = {
      .msg_iov = iov,
      .msg_iovlen = body_len ? 2 : 1,
      .msg_control = control.buf,
      .msg_controllen = 0,
  };
  size_t used = 0;
  if (n_fds) {
    struct cmsghdr *c = (struct cmsghdr *)(control.buf + used);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * n_fds);
    memcpy(CMSG_DATA(c), fds, sizeof(int) * n_fds);
    used += CMSG_SPACE(sizeof(int) * n_fds);
  }
  if (cred_pid > 0) {
    struct cmsghdr *c = (struct cmsghdr *)(control.buf + used);
    struct ucred cred = {.pid = cred_pid, .uid = getuid(), .gid = getgid()};
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_CREDENTIALS;
    c->cmsg_len = CMSG_LEN(sizeof cred);
    memcpy(CMSG_DATA(c), &cred, sizeof cred);
    used += CMSG_SPACE(sizeof cred);
  }
  if (used) {
    msg.msg_controllen = used;
  } else {
    msg.msg_control = NULL;
  }
  ssize_t n;
  do {
    n = sendmsg(sock, &msg, MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  if (n < 0)
    return -errno;
  if ((size_t)n != sizeof header + body_len)
    return -EMSGSIZE;
  return 0;
}

static void close_all(const int *fds, size_t n) {
  for (size_t i = 0; i < n; i++)
    close(fds[i]);
}

ssize_t sbx_zygote_recv(int sock, void *buf, size_t buf_len, int *fds,
                        size_t max_fds, size_t *n_fds, pid_t *cred_pid) {
  *n_fds = 0;
  if (cred_pid)
    *cred_pid = 0;
  if (buf_len < sizeof(sbx_zygote_header))
    return -EINVAL;
  union {
    char buf[CONTROL_LEN];
    struct cmsghdr align;
  } control;
  struct iovec iov = {.iov_base = buf, .iov_len = buf_len};
  struct msghdr msg = {
      .msg_iov = &iov,
      .msg_iovlen = 1,
      .msg_control = control.buf,
      .msg_controllen = sizeof control.buf,
  };
  ssize_t n;
  do {
    n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
  } while (n < 0 && errno == EINTR);
  if (n < 0)
    return -errno;

  /* Collect every descriptor first, so that a refusal closes them all. */
  int got[SBX_ZYGOTE_MAX_FDS + 2];
  size_t n_got = 0;
  gboolean too_many = FALSE, bad_control = FALSE;
  for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
      size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      for (size_t i = 0; i < count; i++) {
        int fd;
        memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
        if (n_got < SBX_ZYGOTE_MAX_FDS + 2 && n_got < max_fds) {
          got[n_got++] = fd;
        } else {
          close(fd);
          too_many = TRUE;
        }
      }
    } else if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS &&
               c->cmsg_len >= CMSG_LEN(sizeof(struct ucred))) {
      struct ucred cred;
      memcpy(&cred, CMSG_DATA(c), sizeof cred);
      if (cred_pid)
        *cred_pid = cred.pid;
    } else {
      bad_control = TRUE;
    }
  }
  if (n == 0 && n_got == 0)
    return 0;
  const sbx_zygote_header *header = buf;
  if (too_many || bad_control || (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) ||
      (size_t)n < sizeof *header || header->magic != SBX_ZYGOTE_MAGIC ||
      header->body_len != (size_t)n - sizeof *header) {
    close_all(got, n_got);
    return -EBADMSG;
  }
  memcpy(fds, got, n_got * sizeof(int));
  *n_fds = n_got;
  return n;
}
