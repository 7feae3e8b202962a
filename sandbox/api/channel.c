/* Message channels between a host and its workers: see sbx.h, "Message
 * channels".
 *
 * Why it exists: a worker's result must go back to its host, and its size
 * is rarely known in advance (a rendered page, a decoded image). Each
 * channel is a SOCK_SEQPACKET pair made by the host at spawn, so packets
 * keep their boundaries and descriptors travel with them; a message of any
 * size is split into packets of at most SBX_CHANNEL_PACKET bytes, so
 * neither side ever holds more than one packet of it.
 *
 * Wire format: every packet starts with a frame header. The first packet
 * of a message has FRAME_FIRST, the message's total length and the number
 * of descriptors attached to that packet (SCM_RIGHTS); every packet
 * carries part of the data, in order, and the one that completes the
 * message has FRAME_LAST (a message of 0 bytes is one packet with both).
 *
 * What it trusts: nothing the other side sends. A receiver checks every
 * header against the message in progress (magic, order of FIRST and LAST,
 * lengths that add up to the total, the descriptor count against what the
 * kernel delivered and against SBX_CHANNEL_MAX_FDS); anything else is a
 * malformed message: every descriptor that came with it is closed, and the
 * channel is broken (every later call fails), because a stream that lied
 * once cannot be resynchronised. A closed peer is an error that says so,
 * never a hang: every wait has the caller's timeout.
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <glib-unix.h>

#include "sandbox/api/channel.h"
#include "sandbox/api/error.h"
#include "sbx/sbx.h"

#define FRAME_MAGIC 0x6d786273u /* "sbxm" */
#define FRAME_FIRST 1u
#define FRAME_LAST 2u

typedef struct {
  uint32_t magic;
  uint32_t flags;
  uint32_t n_fds; /* FRAME_FIRST: descriptors attached to this packet */
  uint32_t reserved;
  uint64_t total; /* FRAME_FIRST: the message's length */
} frame;

#define PAYLOAD_MAX (SBX_CHANNEL_PACKET - sizeof(frame))

struct sbx_channel {
  int fd;
  bool broken;        /* a malformed packet, or a send cut short */
  const char *why;    /* static: why it is broken */
  unsigned char *pkt; /* SBX_CHANNEL_PACKET bytes */
  /* The message being received. */
  bool in_message;    /* a FIRST packet was taken, LAST not yet read */
  uint64_t remaining; /* bytes of it not yet received */
  size_t pkt_off;     /* unread data of the current packet: */
  size_t pkt_len;     /*   pkt[pkt_off .. pkt_len) */
  /* The message being sent. */
  bool sending;
  uint64_t to_send;
  /* A whole message sbx_channel_recv has begun and not finished (its
   * timeout came first): the next call goes on with it. */
  unsigned char *whole;
  uint64_t whole_len, whole_got;
  int whole_fds[SBX_CHANNEL_MAX_FDS];
  size_t whole_n_fds;
};

/* ---- Making and freeing -------------------------------------------------- */

sbx_channel *sbx_api_channel_wrap(int fd) {
  sbx_channel *ch = g_new0(sbx_channel, 1);
  ch->fd = fd;
  ch->pkt = g_malloc(SBX_CHANNEL_PACKET);
  return ch;
}

int sbx_channel_fd(const sbx_channel *ch) {
  return ch ? ch->fd : -1;
}

static void drop_whole(sbx_channel *ch) {
  for (size_t i = 0; i < ch->whole_n_fds; i++)
    close(ch->whole_fds[i]);
  ch->whole_n_fds = 0;
  g_clear_pointer(&ch->whole, g_free);
  ch->whole_len = ch->whole_got = 0;
}

void sbx_channel_close(sbx_channel *ch) {
  if (!ch)
    return;
  drop_whole(ch);
  if (ch->fd >= 0)
    close(ch->fd);
  g_free(ch->pkt);
  g_free(ch);
}

GSource *sbx_channel_source_new(sbx_channel *ch) {
  if (!ch || ch->fd < 0)
    return NULL;
  return g_unix_fd_source_new(ch->fd, G_IO_IN | G_IO_HUP | G_IO_ERR);
}

/* ---- Shared ------------------------------------------------------------- */

static gboolean check_usable(const sbx_channel *ch, const char *what,
                             GError **error) {
  if (!ch) {
    g_set_error(error, SBX_ERROR, SBX_ERROR_INVALID, "%s: channel is NULL",
                what);
    return FALSE;
  }
  if (ch->broken) {
    g_set_error(error, SBX_ERROR, SBX_ERROR_FAILED,
                "%s: the channel is broken (%s)", what, ch->why);
    return FALSE;
  }
  return TRUE;
}

static gboolean break_channel(sbx_channel *ch, const char *why,
                              const char *what, GError **error) {
  ch->broken = true;
  ch->why = why;
  g_set_error(error, SBX_ERROR, SBX_ERROR_FAILED, "%s: %s", what, why);
  return FALSE;
}

static int64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Waits until the channel is ready for events or the deadline (-1: none)
 * passes. TRUE when ready; FALSE with SBX_ERROR_TIMED_OUT. */
static gboolean wait_ready(sbx_channel *ch, short events, int64_t deadline,
                           const char *what, GError **error) {
  for (;;) {
    int timeout = -1;
    if (deadline >= 0) {
      int64_t left = deadline - now_ms();
      timeout = left > 0 ? (int)MIN(left, INT32_MAX) : 0;
    }
    struct pollfd p = {.fd = ch->fd, .events = events};
    int n = poll(&p, 1, timeout);
    if (n > 0)
      return TRUE; /* POLLHUP and POLLERR too: the call says what it was */
    if (n < 0 && errno != EINTR) {
      g_set_error(error, SBX_ERROR, SBX_ERROR_FAILED, "%s: poll: %s", what,
                  g_strerror(errno));
      return FALSE;
    }
    if (n == 0) {
      g_set_error(error, SBX_ERROR, SBX_ERROR_TIMED_OUT,
                  "%s: nothing within the timeout", what);
      return FALSE;
    }
  }
}

static int64_t deadline_of(int timeout_ms) {
  return timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
}

/* ---- Sending ------------------------------------------------------------ */

static gboolean send_packet(sbx_channel *ch, uint32_t flags, uint64_t total,
                            const int *fds, size_t n_fds, const void *data,
                            size_t len, int64_t deadline, const char *what,
                            GError **error) {
  frame f = {.magic = FRAME_MAGIC,
             .flags = flags,
             .n_fds = (uint32_t)n_fds,
             .total = total};
  struct iovec iov[2] = {{&f, sizeof f}, {(void *)data, len}};
  union {
    char buf[CMSG_SPACE(sizeof(int) * SBX_CHANNEL_MAX_FDS)];
    struct cmsghdr align;
  } u;
  struct msghdr msg = {.msg_iov = iov, .msg_iovlen = len ? 2 : 1};
  if (n_fds) {
    memset(&u, 0, sizeof u);
    msg.msg_control = u.buf;
    msg.msg_controllen = CMSG_SPACE(sizeof(int) * n_fds);
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * n_fds);
    memcpy(CMSG_DATA(c), fds, sizeof(int) * n_fds);
  }
  for (;;) {
    ssize_t n = sendmsg(ch->fd, &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n >= 0)
      return TRUE;
    if (errno == EINTR)
      continue;
    if (errno == EAGAIN) {
      if (!wait_ready(ch, POLLOUT, deadline, what, error))
        return FALSE;
      continue;
    }
    if (errno == EPIPE || errno == ECONNRESET || errno == ENOTCONN)
      return break_channel(ch, "the other side closed the channel", what,
                           error);
    g_set_error(error, SBX_ERROR, SBX_ERROR_FAILED, "%s: sendmsg: %s", what,
                g_strerror(errno));
    return FALSE;
  }
}

/* Starts a message of len bytes; its first packet also carries the first
 * bytes of data (at most PAYLOAD_MAX; *sent says how many). */
static gboolean begin(sbx_channel *ch, uint64_t len, const int *fds,
                      size_t n_fds, const void *data, size_t *sent,
                      int64_t deadline, GError **error) {
  const char *what = "sbx_channel_send";
  *sent = 0;
  if (!check_usable(ch, what, error))
    return FALSE;
  if (n_fds > SBX_CHANNEL_MAX_FDS || (n_fds && !fds) || ch->sending) {
    g_set_error(error, SBX_ERROR, SBX_ERROR_INVALID,
                ch->sending     ? "%s: the previous message is not complete "
                                  "(%" G_GUINT64_FORMAT " bytes to write)"
                : n_fds && !fds ? "%s: n_fds is %zu but fds is NULL"
                                : "%s: %zu descriptors, at most %d",
                what, ch->sending ? (size_t)ch->to_send : n_fds,
                SBX_CHANNEL_MAX_FDS);
    return FALSE;
  }
  for (size_t i = 0; i < n_fds; i++) {
    if (fds[i] < 0) {
      g_set_error(error, SBX_ERROR, SBX_ERROR_INVALID,
                  "%s: descriptor %zu is %d", what, i, fds[i]);
      return FALSE;
    }
  }
  size_t first = data ? (size_t)MIN(len, PAYLOAD_MAX) : 0;
  if (!send_packet(ch, FRAME_FIRST | (first == len ? FRAME_LAST : 0), len, fds,
                   n_fds, data, first, deadline, what, error))
    return FALSE;
  ch->to_send = len - first;
  ch->sending = ch->to_send > 0;
  *sent = first;
  return TRUE;
}

gboolean sbx_channel_send_begin(sbx_channel *ch, uint64_t len, const int *fds,
                                size_t n_fds, int timeout_ms, GError **error) {
  size_t sent;
  return begin(ch, len, fds, n_fds, NULL, &sent, deadline_of(timeout_ms),
               error);
}

gboolean sbx_channel_write(sbx_channel *ch, const void *data, size_t len,
                           int timeout_ms, GError **error) {
  const char *what = "sbx_channel_write";
  if (!check_usable(ch, what, error))
    return FALSE;
  if ((len && !data) || len > ch->to_send || (len && !ch->sending)) {
    g_set_error(error, SBX_ERROR, SBX_ERROR_INVALID,
                len && !data ? "%s: len is %zu but data is NULL"
                             : "%s: %zu bytes, more than the %" G_GUINT64_FORMAT
                               " the message has left",
                what, len, ch->sending ? ch->to_send : 0);
    return FALSE;
  }
  int64_t deadline = deadline_of(timeout_ms);
  const unsigned char *p = data;
  while (len > 0) {
    size_t n = MIN(len, PAYLOAD_MAX);
    bool last = n == ch->to_send;
    if (!send_packet(ch, last ? FRAME_LAST : 0, 0, NULL, 0, p, n, deadline,
                     what, error)) {
      /* Part of a message is on its way: the stream cannot go on. */
      ch->broken = true;
      ch->why = "a message was cut short";
      return FALSE;
    }
    p += n;
    len -= n;
    ch->to_send -= n;
  }
  ch->sending = ch->to_send > 0;
  return TRUE;
}

gboolean sbx_channel_send(sbx_channel *ch, const void *data, size_t len,
                          const int *fds, size_t n_fds, int timeout_ms,
                          GError **error) {
  if (ch && len && !data) {
    g_set_error(error, SBX_ERROR, SBX_ERROR_INVALID,
                "sbx_channel_send: len is %zu but data is NULL", len);
    return FALSE;
  }
  int64_t deadline = deadline_of(timeout_ms);
  size_t sent = 0;
  if (!begin(ch, len, fds, n_fds, data, &sent, deadline, error))
    return FALSE;
  int left = -1;
  if (deadline >= 0)
    left = (int)MAX(deadline - now_ms(), 0);
  return sent == len ||
         sbx_channel_write(ch, (const unsigned char *)data + sent, len - sent,
                           left, error);
}

/* ---- Receiving ---------------------------------------------------------- */

static void close_all(const int *fds, size_t n) {
  for (size_t i = 0; i < n; i++)
    close(fds[i]);
}

/* Receives one packet into ch->pkt and checks it against the message in
 * progress. Descriptors it carried go to fds (at most max), their number
 * to *n_fds; on any failure none is left open. */
static gboolean recv_packet(sbx_channel *ch, int64_t deadline, int *fds,
                            size_t max, size_t *n_fds, const char *what,
                            GError **error) {
  *n_fds = 0;
  if (!wait_ready(ch, POLLIN, deadline, what, error))
    return FALSE;
  union {
    char buf[CMSG_SPACE(sizeof(int) * SBX_CHANNEL_MAX_FDS)];
    struct cmsghdr align;
  } u;
  struct iovec iov = {ch->pkt, SBX_CHANNEL_PACKET};
  struct msghdr msg = {.msg_iov = &iov,
                       .msg_iovlen = 1,
                       .msg_control = u.buf,
                       .msg_controllen = sizeof u.buf};
  ssize_t n;
  do {
    n = recvmsg(ch->fd, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
  } while (n < 0 && errno == EINTR);
  if (n < 0 && errno == EAGAIN) {
    g_set_error(error, SBX_ERROR, SBX_ERROR_TIMED_OUT,
                "%s: nothing within the timeout", what);
    return FALSE;
  }
  if (n < 0 && errno != ECONNRESET) {
    g_set_error(error, SBX_ERROR, SBX_ERROR_FAILED, "%s: recvmsg: %s", what,
                g_strerror(errno));
    return FALSE;
  }
  int got[SBX_CHANNEL_MAX_FDS];
  size_t n_got = 0;
  for (struct cmsghdr *c = n > 0 ? CMSG_FIRSTHDR(&msg) : NULL; c;
       c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
      continue;
    size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < k; i++) {
      int fd;
      memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
      if (n_got < SBX_CHANNEL_MAX_FDS)
        got[n_got++] = fd;
      else
        close(fd);
    }
  }
  if (n <= 0)
    return break_channel(ch, "the other side closed the channel", what, error);
  frame f;
  const char *bad = NULL;
  size_t data = (size_t)n - MIN((size_t)n, sizeof f);
  if ((msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) || (size_t)n < sizeof f) {
    bad = "a packet that does not fit the format";
  } else {
    memcpy(&f, ch->pkt, sizeof f);
    bool first = f.flags & FRAME_FIRST, last = f.flags & FRAME_LAST;
    uint64_t left = first ? f.total : ch->remaining;
    if (f.magic != FRAME_MAGIC || (f.flags & ~(FRAME_FIRST | FRAME_LAST)))
      bad = "a packet without the channel's header";
    else if (first == ch->in_message)
      bad = first ? "a new message before the last one ended"
                  : "data outside any message";
    else if (f.n_fds != (first ? n_got : 0) || n_got > max)
      bad = n_got > max ? "more descriptors than the receiver takes"
                        : "a descriptor count that does not match";
    else if (data > left || last != (data == left))
      bad = "lengths that do not add up to the message's";
  }
  if (bad) {
    close_all(got, n_got);
    ch->in_message = false;
    g_autofree char *why = g_strdup_printf("malformed message: %s", bad);
    ch->broken = true;
    ch->why = bad;
    g_set_error(error, SBX_ERROR, SBX_ERROR_INVALID, "%s: %s", what, why);
    return FALSE;
  }
  if (f.flags & FRAME_FIRST)
    ch->remaining = f.total;
  ch->remaining -= data;
  ch->in_message = ch->remaining > 0 || !(f.flags & FRAME_LAST);
  ch->pkt_off = sizeof f;
  ch->pkt_len = (size_t)n;
  memcpy(fds, got, n_got * sizeof(int));
  *n_fds = n_got;
  return TRUE;
}

/* Bytes of the current message not yet read by the caller. */
static uint64_t unread(const sbx_channel *ch) {
  return (ch->pkt_len - ch->pkt_off) + (ch->in_message ? ch->remaining : 0);
}

gboolean sbx_channel_recv_begin(sbx_channel *ch, int timeout_ms, uint64_t *len,
                                int *fds, size_t max_fds, size_t *n_fds,
                                GError **error) {
  const char *what = "sbx_channel_recv";
  if (n_fds)
    *n_fds = 0;
  if (!check_usable(ch, what, error))
    return FALSE;
  if (!len || (max_fds && (!fds || !n_fds))) {
    g_set_error(error, SBX_ERROR, SBX_ERROR_INVALID, "%s: %s is NULL", what,
                !len   ? "len"
                : !fds ? "fds"
                       : "n_fds");
    return FALSE;
  }
  int64_t deadline = deadline_of(timeout_ms);
  drop_whole(ch);
  /* What is left of an earlier message is skipped. */
  while (unread(ch) > 0) {
    size_t skipped;
    ch->pkt_off = ch->pkt_len;
    if (ch->in_message) {
      int none[1];
      if (!recv_packet(ch, deadline, none, 0, &skipped, what, error))
        return FALSE;
    }
  }
  size_t got = 0;
  int tmp[SBX_CHANNEL_MAX_FDS];
  if (!recv_packet(
          ch, deadline, tmp,
          max_fds > SBX_CHANNEL_MAX_FDS ? SBX_CHANNEL_MAX_FDS : max_fds, &got,
          what, error))
    return FALSE;
  uint64_t total = ch->remaining + (ch->pkt_len - ch->pkt_off);
  *len = total;
  if (got)
    memcpy(fds, tmp, got * sizeof(int));
  if (n_fds)
    *n_fds = got;
  return TRUE;
}

gboolean sbx_channel_read(sbx_channel *ch, void *buf, size_t cap,
                          int timeout_ms, size_t *got, GError **error) {
  const char *what = "sbx_channel_read";
  if (got)
    *got = 0;
  if (!check_usable(ch, what, error))
    return FALSE;
  if (!got || (cap && !buf)) {
    g_set_error(error, SBX_ERROR, SBX_ERROR_INVALID, "%s: %s is NULL", what,
                !got ? "got" : "buf");
    return FALSE;
  }
  int64_t deadline = deadline_of(timeout_ms);
  unsigned char *out = buf;
  size_t done = 0;
  while (done < cap) {
    if (ch->pkt_off == ch->pkt_len) {
      if (!ch->in_message)
        break; /* the end of the message */
      size_t n_fds;
      int none[1];
      if (!recv_packet(ch, deadline, none, 0, &n_fds, what, error)) {
        *got = done;
        return FALSE;
      }
      continue;
    }
    size_t n = MIN(cap - done, ch->pkt_len - ch->pkt_off);
    memcpy(out + done, ch->pkt + ch->pkt_off, n);
    ch->pkt_off += n;
    done += n;
  }
  *got = done;
  return TRUE;
}

GBytes *sbx_channel_recv(sbx_channel *ch, size_t max_len, int timeout_ms,
                         int *fds, size_t max_fds, size_t *n_fds,
                         GError **error) {
  const char *what = "sbx_channel_recv";
  if (n_fds)
    *n_fds = 0;
  if (!check_usable(ch, what, error))
    return NULL;
  if (max_fds && (!fds || !n_fds)) {
    g_set_error(error, SBX_ERROR, SBX_ERROR_INVALID, "%s: %s is NULL", what,
                !fds ? "fds" : "n_fds");
    return NULL;
  }
  if (!ch->whole) {
    uint64_t len = 0;
    size_t got = 0;
    if (!sbx_channel_recv_begin(ch, timeout_ms, &len, ch->whole_fds, max_fds,
                                &got, error))
      return NULL;
    ch->whole_n_fds = got;
    if (len > max_len) {
      drop_whole(ch);
      g_set_error(error, SBX_ERROR, SBX_ERROR_INVALID,
                  "%s: a message of %" G_GUINT64_FORMAT
                  " bytes, more than the %zu this call takes (it is skipped)",
                  what, len, max_len);
      return NULL;
    }
    ch->whole = g_malloc(len ? len : 1);
    ch->whole_len = len;
    ch->whole_got = 0;
  }
  /* A message begun by an earlier call that timed out goes on here. */
  size_t got = 0;
  GError *local = NULL;
  gboolean ok =
      sbx_channel_read(ch, ch->whole + ch->whole_got,
                       ch->whole_len - ch->whole_got, timeout_ms, &got, &local);
  ch->whole_got += got;
  if (!ok) {
    if (!g_error_matches(local, SBX_ERROR, SBX_ERROR_TIMED_OUT))
      drop_whole(ch);
    g_propagate_error(error, local);
    return NULL;
  }
  if (ch->whole_got != ch->whole_len || ch->whole_n_fds > max_fds) {
    drop_whole(ch);
    g_set_error(error, SBX_ERROR, SBX_ERROR_FAILED,
                "%s: the message ended early", what);
    return NULL;
  }
  if (ch->whole_n_fds)
    memcpy(fds, ch->whole_fds, ch->whole_n_fds * sizeof(int));
  if (n_fds)
    *n_fds = ch->whole_n_fds;
  ch->whole_n_fds = 0;
  GBytes *b = g_bytes_new_take(g_steal_pointer(&ch->whole), ch->whole_len);
  ch->whole_len = ch->whole_got = 0;
  return b;
}
