/* Decoding of worker requests; see protocol.h.
 *
 * Trusts nothing in the datagram. Refuses anything a correct client would
 * not send: the caller closes the channel on any refusal.
 */
#include "sandbox/broker/protocol.h"

#include <stdbool.h>
#include <string.h>

static int refuse(const char **reason, const char *why) {
  if (reason)
    *reason = why;
  return -1;
}

/* A string field: `len` bytes ending in its only NUL. */
static bool good_string(const char *s, size_t len) {
  return len >= 1 && s[len - 1] == '\0' && memchr(s, '\0', len - 1) == NULL;
}

/* ATTACH: the header alone, every field but the command zero. */
static int decode_attach(const sbx_broker_request *h, size_t len,
                         sbx_broker_request_view *out, const char **reason) {
  if (len != sizeof(*h) || h->path_len || h->path2_len || h->flags || h->arg)
    return refuse(reason, "attach is a bare header");
  out->command = SBX_BROKER_ATTACH;
  out->id = h->id;
  return 0;
}

/* LISTENER: the header and the pid, every other field zero. */
static int decode_listener(const sbx_broker_request *h, size_t len,
                           sbx_broker_request_view *out, const char **reason) {
  if (len != sizeof(*h) || h->path_len || h->path2_len || h->flags || h->id ||
      h->arg == 0 || h->arg > INT32_MAX)
    return refuse(reason, "listener is a header and a pid");
  out->command = SBX_BROKER_LISTENER;
  out->arg = h->arg;
  return 0;
}

int sbx_broker_decode_request(const void *buf, size_t len,
                              sbx_broker_request_view *out,
                              const char **reason) {
  memset(out, 0, sizeof(*out));
  if (reason)
    *reason = NULL;
  if (len < sizeof(sbx_broker_request))
    return refuse(reason, "shorter than the header");
  if (len > SBX_BROKER_MAX_REQUEST)
    return refuse(reason, "longer than the maximum request");
  sbx_broker_request h;
  memcpy(&h, buf, sizeof(h));
  if (h.magic != SBX_BROKER_MAGIC)
    return refuse(reason, "bad magic");
  if (h.version != SBX_BROKER_VERSION)
    return refuse(reason, "unsupported protocol version");
  if (h.command == SBX_BROKER_ATTACH)
    return decode_attach(&h, len, out, reason);
  if (h.command == SBX_BROKER_LISTENER)
    return decode_listener(&h, len, out, reason);
  if (h.path_len == 0 && h.path2_len != 0)
    return refuse(reason, "second path without a first");
  unsigned paths = (h.path_len != 0) + (h.path2_len != 0);
  const char *why =
      sbx_broker_command_refusal(h.command, paths, h.flags, h.arg);
  if (why)
    return refuse(reason, why);
  if (h.path_len > PATH_MAX || h.path2_len > PATH_MAX)
    return refuse(reason, "path length out of range");
  size_t body = (size_t)h.path_len + (size_t)h.path2_len;
  if (len - sizeof(h) != body)
    return refuse(reason, "lengths do not add up to the datagram size");
  const char *p = (const char *)buf + sizeof(h);
  if (!good_string(p, h.path_len))
    return refuse(reason, "path not NUL-terminated or with embedded NUL");
  const char *p2 = NULL;
  if (paths == 2) {
    p2 = p + h.path_len;
    if (!good_string(p2, h.path2_len))
      return refuse(reason,
                    "second path not NUL-terminated or with embedded NUL");
  }
  out->command = h.command;
  out->id = h.id;
  out->flags = h.flags;
  out->arg = h.arg;
  out->path = p;
  out->path_len = h.path_len - 1u;
  out->path2 = p2;
  out->path2_len = p2 ? h.path2_len - 1u : 0;
  return 0;
}

void sbx_broker_msg_attach_fd(struct msghdr *msg, sbx_broker_fd_cmsg *buf,
                              int fd) {
  memset(buf, 0, sizeof(*buf));
  msg->msg_control = buf->buf;
  msg->msg_controllen = sizeof(buf->buf);
  struct cmsghdr *c = CMSG_FIRSTHDR(msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  memcpy(CMSG_DATA(c), &fd, sizeof(int));
}
