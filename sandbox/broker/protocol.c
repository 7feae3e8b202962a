/* Decoding of worker requests; see protocol.h.
 *
 * Trusts nothing in the datagram. Refuses anything a correct client would
 * not send: the caller closes the channel on any refusal.
 */
#include "sandbox/broker/protocol.h"

#include <stdbool.h>

#include "sandbox/broker/commands.h"
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
  if (!sbx_broker_command_find(h.command))
    return refuse(reason, "unknown command");
  unsigned paths = sbx_broker_command_paths(h.command);
  if (paths == 0) {
    if (h.path_len != 0)
      return refuse(reason, "path on a command without one");
  } else if (h.path_len == 0 || h.path_len > PATH_MAX) {
    return refuse(reason, "path length out of range");
  }
  if (paths == 2) {
    if (h.path2_len == 0 || h.path2_len > PATH_MAX)
      return refuse(reason, "second path length out of range");
  } else if (h.path2_len != 0) {
    return refuse(reason, "second path on a one-path command");
  }
  size_t body = (size_t)h.path_len + (size_t)h.path2_len;
  if (len - sizeof(h) != body)
    return refuse(reason, "lengths do not add up to the datagram size");
  const char *p = paths ? (const char *)buf + sizeof(h) : NULL;
  if (p && !good_string(p, h.path_len))
    return refuse(reason, "path not NUL-terminated or with embedded NUL");
  const char *p2 = NULL;
  if (paths == 2) {
    p2 = p + h.path_len;
    if (!good_string(p2, h.path2_len))
      return refuse(reason,
                    "second path not NUL-terminated or with embedded NUL");
  }
  if (sbx_broker_check_fields(h.command, h.flags, h.arg) != 0)
    return refuse(reason, "flags or argument out of range for the command");
  out->command = h.command;
  out->id = h.id;
  out->flags = h.flags;
  out->arg = h.arg;
  out->path = p;
  out->path_len = p ? h.path_len - 1u : 0;
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
