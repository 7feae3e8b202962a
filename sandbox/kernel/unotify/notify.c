/* The seccomp user-notification ioctls; see notify.h.
 *
 * Trusts the kernel only. Refuses nothing itself: deciding is the
 * supervisor's job, this file only carries answers.
 */
#include "sandbox/kernel/unotify/notify.h"

#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

GQuark sbx_unotify_error_quark(void) {
  return g_quark_from_static_string("sbx-unotify-error-quark");
}

gboolean sbx_unotify_buffers_init(sbx_unotify_buffers *b, GError **error) {
  struct seccomp_notif_sizes sizes;
  memset(b, 0, sizeof(*b));
  if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) < 0) {
    int err = errno;
    g_set_error(error, SBX_UNOTIFY_ERROR, SBX_UNOTIFY_ERROR_UNSUPPORTED,
                "seccomp(SECCOMP_GET_NOTIF_SIZES): %s (the kernel lacks "
                "seccomp user notification, Linux 5.0)",
                g_strerror(err));
    return FALSE;
  }
  b->req_size = MAX((size_t)sizes.seccomp_notif, sizeof(struct seccomp_notif));
  b->resp_size =
      MAX((size_t)sizes.seccomp_notif_resp, sizeof(struct seccomp_notif_resp));
  b->req = g_malloc0(b->req_size);
  b->resp = g_malloc0(b->resp_size);
  return TRUE;
}

void sbx_unotify_buffers_clear(sbx_unotify_buffers *b) {
  g_clear_pointer(&b->req, g_free);
  g_clear_pointer(&b->resp, g_free);
  b->req_size = b->resp_size = 0;
}

gboolean sbx_unotify_channel_open(sbx_unotify_channel *ch, int listener,
                                  GError **error) {
  ch->listener = listener;
  if (!sbx_unotify_buffers_init(&ch->buf, error)) {
    sbx_unotify_channel_close(ch);
    return FALSE;
  }
  /* Same-CPU wakeups halve the cost of a round trip where the kernel has
   * them (6.6); older kernels just do without. */
  (void)sbx_unotify_set_sync_wakeup(listener);
  return TRUE;
}

void sbx_unotify_channel_close(sbx_unotify_channel *ch) {
  if (ch->listener >= 0)
    close(ch->listener);
  ch->listener = -1;
  sbx_unotify_buffers_clear(&ch->buf);
}

int sbx_unotify_recv(int listener, sbx_unotify_buffers *b) {
  for (;;) {
    memset(b->req, 0, b->req_size);
    if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, b->req) == 0)
      return 0;
    if (errno != EINTR)
      return -errno;
  }
}

int sbx_unotify_id_valid(int listener, uint64_t id) {
  if (ioctl(listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0)
    return 0;
  return -errno;
}

static int send_resp(int listener, sbx_unotify_buffers *b) {
  for (;;) {
    if (ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, b->resp) == 0)
      return 0;
    if (errno != EINTR)
      return -errno;
  }
}

int sbx_unotify_reply(int listener, sbx_unotify_buffers *b, uint64_t id,
                      int64_t val, int error) {
  memset(b->resp, 0, b->resp_size);
  b->resp->id = id;
  b->resp->val = error ? 0 : val;
  b->resp->error = error ? -error : 0;
  return send_resp(listener, b);
}

int sbx_unotify_continue(int listener, sbx_unotify_buffers *b, uint64_t id) {
  memset(b->resp, 0, b->resp_size);
  b->resp->id = id;
  b->resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
  return send_resp(listener, b);
}

int sbx_unotify_send_fd(int listener, uint64_t id, int srcfd,
                        unsigned newfd_flags) {
  struct seccomp_notif_addfd addfd = {
      .id = id,
      .flags = SECCOMP_ADDFD_FLAG_SEND,
      .srcfd = (uint32_t)srcfd,
      .newfd = 0,
      .newfd_flags = newfd_flags,
  };
  /* Not retried on EINTR: with SECCOMP_ADDFD_FLAG_SEND the kernel marks
   * the call answered before it waits, so a second attempt could not
   * succeed. The supervisor blocks its signals, so this does not happen. */
  int rc = ioctl(listener, SECCOMP_IOCTL_NOTIF_ADDFD, &addfd);
  return rc >= 0 ? rc : -errno;
}

int sbx_unotify_set_sync_wakeup(int listener) {
  if (ioctl(listener, SECCOMP_IOCTL_NOTIF_SET_FLAGS,
            (unsigned long)SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP) == 0)
    return 0;
  return -errno;
}

int sbx_unotify_send_listener(int sock, const void *data, size_t len, int fd) {
  struct iovec iov = {.iov_base = (void *)data, .iov_len = len};
  union {
    char buf[CMSG_SPACE(sizeof(int))];
    struct cmsghdr align;
  } u;
  memset(&u, 0, sizeof(u));
  struct msghdr mh = {.msg_iov = &iov,
                      .msg_iovlen = 1,
                      .msg_control = u.buf,
                      .msg_controllen = sizeof(u.buf)};
  struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
  cm->cmsg_level = SOL_SOCKET;
  cm->cmsg_type = SCM_RIGHTS;
  cm->cmsg_len = CMSG_LEN(sizeof(int));
  memcpy(CMSG_DATA(cm), &fd, sizeof(int));
  return sendmsg(sock, &mh, MSG_NOSIGNAL) == (ssize_t)len ? 0 : -errno;
}

ssize_t sbx_unotify_recv_listener(int sock, void *data, size_t len, int *fd,
                                  int flags) {
  *fd = -1;
  struct iovec iov = {.iov_base = data, .iov_len = len};
  union {
    char buf[CMSG_SPACE(sizeof(int))];
    struct cmsghdr align;
  } u;
  struct msghdr mh = {.msg_iov = &iov,
                      .msg_iovlen = 1,
                      .msg_control = u.buf,
                      .msg_controllen = sizeof(u.buf)};
  ssize_t n;
  do
    n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC | flags);
  while (n < 0 && errno == EINTR);
  if (n < 0)
    return -errno;
  for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
    if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS &&
        cm->cmsg_len == CMSG_LEN(sizeof(int)))
      memcpy(fd, CMSG_DATA(cm), sizeof(int));
  if (n != 0 && ((size_t)n != len || (mh.msg_flags & MSG_CTRUNC))) {
    if (*fd >= 0)
      close(*fd);
    *fd = -1;
    return -EPROTO;
  }
  return n;
}
