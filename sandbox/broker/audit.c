/* Audit lines; see audit.h.
 *
 * Trusts nothing in the strings it prints (paths come from workers), so
 * every byte that could end or fake a line is escaped, and every field
 * has a size it cannot pass. Trusts nothing of the sink's reader either:
 * no write here waits for it.
 */
#include "sandbox/broker/audit.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

#include "sandbox/broker/protocol.h"

/* Character devices of major 5 are /dev/tty, /dev/console and /dev/ptmx:
 * reopening them does not reach the same terminal (a new pty for ptmx). */
#define TTYAUX_MAJOR 5

/* Tokens are counted in thousandths of a line. */
#define TOKEN 1000u

/* ---- Formatting ---------------------------------------------------------- */

typedef struct {
  char *buf;
  size_t size;
  size_t len;
} out_buf;

static void put(out_buf *o, const char *s, size_t n) {
  if (o->len + 1 >= o->size)
    return;
  size_t room = o->size - 1 - o->len;
  if (n > room)
    n = room;
  memcpy(o->buf + o->len, s, n);
  o->len += n;
}

static void puts_(out_buf *o, const char *s) {
  put(o, s, strlen(s));
}

static bool is_plain(unsigned char c) {
  return c >= 0x20 && c <= 0x7e && c != '"' && c != '\\';
}

static size_t escaped_len(const char *s) {
  size_t n = 0;
  for (const unsigned char *p = (const unsigned char *)s; *p; p++)
    n += is_plain(*p) ? 1 : 4;
  return n;
}

/* Writes s escaped in at most max bytes: cut before the first byte whose
 * escape would not fit with "..." after it. Returns whether all of s was
 * written. */
static bool put_escaped(out_buf *o, const char *s, size_t max) {
  static const char hex[] = "0123456789abcdef";
  bool whole = escaped_len(s) <= max;
  size_t limit = whole ? max : max - 3;
  size_t used = 0;
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    size_t need = is_plain(*p) ? 1 : 4;
    if (used + need > limit)
      break;
    if (need == 1) {
      put(o, (const char *)p, 1);
    } else {
      char esc[4] = {'\\', 'x', hex[*p >> 4], hex[*p & 15]};
      put(o, esc, 4);
    }
    used += need;
  }
  if (!whole)
    puts_(o, "...");
  return whole;
}

static void put_path(out_buf *o, const char *key, const char *path) {
  char num[48];
  puts_(o, " ");
  puts_(o, key);
  puts_(o, "=\"");
  bool whole = put_escaped(o, path, SBX_AUDIT_PATH_MAX);
  puts_(o, "\"");
  if (!whole) {
    snprintf(num, sizeof(num), " %s_len=%zu", key, strlen(path));
    puts_(o, num);
  }
}

/* An out_buf over buf that keeps room for the '\n' and the NUL and never
 * lets a line pass SBX_AUDIT_LINE_MAX. */
static out_buf line_buf(char *buf, size_t size) {
  if (size > SBX_AUDIT_LINE_MAX + 1)
    size = SBX_AUDIT_LINE_MAX + 1;
  return (out_buf){buf, size - 1, 0};
}

static size_t end_line(out_buf *o) {
  o->buf[o->len++] = '\n';
  o->buf[o->len] = '\0';
  return o->len;
}

size_t sbx_audit_format(const sbx_audit_record *rec, char *buf, size_t size) {
  if (size < 2) {
    if (size)
      buf[0] = '\0';
    return 0;
  }
  out_buf o = line_buf(buf, size);
  char num[64];
  puts_(&o, rec->granted ? "sbx: granted op=" : "sbx: denied op=");
  put_escaped(&o, rec->op ? rec->op : "unknown", SBX_AUDIT_NAME_MAX);
  if (rec->path)
    put_path(&o, "path", rec->path);
  if (rec->path2)
    put_path(&o, "path2", rec->path2);
  if (rec->call) {
    puts_(&o, " call=\"");
    put_escaped(&o, rec->call, SBX_AUDIT_HINT_MAX);
    puts_(&o, "\"");
  } else {
    puts_(&o, " flags=");
    char flags[SBX_FS_FLAGS_TEXT_MAX];
    sbx_fs_format_flags(rec->fs_op, rec->flags, flags, sizeof(flags));
    puts_(&o, flags);
  }
  puts_(&o, " type=");
  put_escaped(&o, rec->type ? rec->type : "unknown", SBX_AUDIT_NAME_MAX);
  snprintf(num, sizeof(num), " pid=%d errno=", (int)rec->pid);
  puts_(&o, num);
  if (rec->result >= 0) {
    puts_(&o, "0");
  } else {
    const char *name = strerrorname_np(-rec->result);
    if (name) {
      puts_(&o, name);
    } else {
      snprintf(num, sizeof(num), "%d", -rec->result);
      puts_(&o, num);
    }
  }
  if (rec->reason) {
    puts_(&o, " reason=\"");
    put_escaped(&o, rec->reason, SBX_AUDIT_REASON_MAX);
    puts_(&o, "\"");
  }
  /* Only on one-path lines, so that every field still fits. */
  if (!rec->path2 && rec->target && *rec->target) {
    puts_(&o, " target=\"");
    put_escaped(&o, rec->target, SBX_AUDIT_HINT_MAX);
    puts_(&o, "\"");
  }
  if (!rec->path2 && rec->allow && *rec->allow) {
    puts_(&o, " allow=\"");
    put_escaped(&o, rec->allow, SBX_AUDIT_HINT_MAX);
    puts_(&o, "\"");
  }
  return end_line(&o);
}

/* ---- The sink -------------------------------------------------------------
 */

/* A description of the broker's own for a pipe, FIFO or terminal, at the
 * same number; false when the kernel will not give one. */
static bool reopen_own(int fd, const struct stat *st) {
  if (!S_ISFIFO(st->st_mode) &&
      !(S_ISCHR(st->st_mode) && major(st->st_rdev) != TTYAUX_MAJOR))
    return false;
  int fl = fcntl(fd, F_GETFL);
  int fdflags = fcntl(fd, F_GETFD);
  if (fl < 0 || fdflags < 0)
    return false;
  char path[40];
  snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
  /* O_NONBLOCK also keeps the open itself from waiting: a FIFO with no
   * reader fails (ENXIO) instead, and is shared as it is. */
  int own = open(
      path, O_WRONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC | (fl & O_APPEND));
  if (own < 0)
    return false;
  struct stat now;
  bool same = fstat(own, &now) == 0 && now.st_dev == st->st_dev &&
              now.st_ino == st->st_ino && now.st_rdev == st->st_rdev;
  bool moved =
      same && dup3(own, fd, (fdflags & FD_CLOEXEC) ? O_CLOEXEC : 0) == fd;
  close(own);
  return moved;
}

void sbx_audit_open(sbx_audit *a, int fd, bool log_grants, unsigned flags) {
  memset(a, 0, sizeof(*a));
  a->fd = fd;
  a->log_grants = log_grants;
  a->kind = SBX_AUDIT_SINK_NONE;
  struct stat st;
  if (fd < 0)
    return;
  if (fstat(fd, &st) != 0) {
    a->kind = SBX_AUDIT_SINK_SHARED;
  } else if (S_ISREG(st.st_mode) || S_ISBLK(st.st_mode)) {
    a->kind = SBX_AUDIT_SINK_FILE;
  } else if (S_ISSOCK(st.st_mode)) {
    a->kind = SBX_AUDIT_SINK_SOCKET;
  } else {
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0 && (fl & O_NONBLOCK))
      a->kind = SBX_AUDIT_SINK_OWN; /* whoever shares it asked for that */
    else if (!(flags & SBX_AUDIT_NO_REOPEN) && reopen_own(fd, &st))
      a->kind = SBX_AUDIT_SINK_OWN;
    else
      a->kind = SBX_AUDIT_SINK_SHARED;
  }
}

void sbx_audit_close(sbx_audit *a) {
  if (a->fd >= 0)
    close(a->fd);
  a->fd = -1;
  a->kind = SBX_AUDIT_SINK_NONE;
}

/* Writes at most n bytes without waiting: the count written, or -1 with
 * errno (EAGAIN: the sink is full). */
static ssize_t sink_write(sbx_audit *a, const char *buf, size_t n) {
  for (;;) {
    ssize_t w;
    if (a->kind == SBX_AUDIT_SINK_SOCKET) {
      w = send(a->fd, buf, n, MSG_DONTWAIT | MSG_NOSIGNAL);
    } else if (a->kind == SBX_AUDIT_SINK_SHARED) {
      struct iovec iov = {.iov_base = (void *)buf, .iov_len = n};
      w = pwritev2(a->fd, &iov, 1, -1, RWF_NOWAIT);
      if (w < 0 &&
          (errno == EOPNOTSUPP || errno == EINVAL || errno == ENOSYS)) {
        a->kind = SBX_AUDIT_SINK_POLLED; /* a terminal, or an old kernel */
        continue;
      }
    } else if (a->kind == SBX_AUDIT_SINK_POLLED) {
      struct pollfd p = {.fd = a->fd, .events = POLLOUT};
      int r = poll(&p, 1, 0);
      if (r < 0 && errno == EINTR)
        continue;
      if (r == 0) {
        errno = EAGAIN;
        return -1;
      }
      w = write(a->fd, buf, n); /* POLLERR, POLLHUP: write says why */
    } else {
      w = write(a->fd, buf, n);
    }
    if (w < 0 && errno == EINTR)
      continue;
    return w;
  }
}

static void count_dropped(sbx_audit *a) {
  a->dropped++;
  a->dropped_total++;
}

/* Finishes a line the sink took only part of; true when none is left.
 * A sink that fails for good (not merely full) loses the rest, and the
 * next line then starts on a line of its own. */
static bool finish_pending(sbx_audit *a) {
  while (a->pending_off < a->pending_len) {
    ssize_t w = sink_write(a, a->pending + a->pending_off,
                           a->pending_len - a->pending_off);
    if (w <= 0) {
      bool full = w == 0 || errno == EAGAIN || errno == EWOULDBLOCK;
      if (!full && !(a->pending_len == 1 && a->pending[0] == '\n')) {
        count_dropped(a); /* the line that was cut */
        a->pending[0] = '\n';
        a->pending_off = 0;
        a->pending_len = 1;
      }
      return false;
    }
    a->pending_off += (size_t)w;
  }
  a->pending_off = a->pending_len = 0;
  return true;
}

/* Writes one line (nothing pending): false when the sink took none of it;
 * what it did not take of a partial write is kept as pending. */
static bool put_line(sbx_audit *a, const char *line, size_t n) {
  ssize_t w = sink_write(a, line, n);
  if (w <= 0)
    return false;
  if ((size_t)w < n) {
    a->pending_len = n - (size_t)w;
    a->pending_off = 0;
    memcpy(a->pending, line + w, a->pending_len);
  }
  return true;
}

/* The `dropped` line, if one is owed; true when the sink may take the
 * next line now. */
static bool report_dropped(sbx_audit *a) {
  if (a->dropped == 0)
    return true;
  char buf[64];
  int n = snprintf(buf, sizeof(buf), "sbx: dropped lines=%" PRIu64 "\n",
                   a->dropped);
  if (!put_line(a, buf, (size_t)n))
    return false;
  a->dropped = 0;
  return a->pending_len == 0;
}

static void emit(sbx_audit *a, const char *line, size_t n) {
  if (!finish_pending(a) || !report_dropped(a) || !put_line(a, line, n))
    count_dropped(a);
}

void sbx_audit_write(sbx_audit *a, const sbx_audit_record *rec) {
  if (!a || a->fd < 0)
    return;
  if (rec->granted && !a->log_grants)
    return;
  char line[SBX_AUDIT_LINE_MAX + 1];
  size_t n = sbx_audit_format(rec, line, sizeof(line));
  emit(a, line, n);
}

bool sbx_audit_owes(const sbx_audit *a) {
  return a && a->fd >= 0 && (a->dropped > 0 || a->pending_len > 0);
}

void sbx_audit_flush(sbx_audit *a) {
  if (sbx_audit_owes(a) && finish_pending(a))
    report_dropped(a);
}

/* ---- Budgets --------------------------------------------------------------
 */

void sbx_audit_budget_init(sbx_audit_budget *b, const char *type,
                           int64_t now_ms) {
  memset(b, 0, sizeof(*b));
  b->type = type;
  b->tokens = (uint64_t)SBX_AUDIT_DENIAL_BURST * TOKEN;
  b->last_ms = now_ms;
}

static void refill(sbx_audit_budget *b, int64_t now_ms) {
  if (now_ms <= b->last_ms)
    return;
  uint64_t full = (uint64_t)SBX_AUDIT_DENIAL_BURST * TOKEN;
  uint64_t add = (uint64_t)(now_ms - b->last_ms) * SBX_AUDIT_DENIALS_PER_SECOND;
  b->tokens = add >= full - b->tokens ? full : b->tokens + add;
  b->last_ms = now_ms;
}

static void write_suppressed(sbx_audit *a, sbx_audit_budget *b) {
  if (b->suppressed == 0)
    return;
  char line[SBX_AUDIT_LINE_MAX + 1];
  out_buf o = line_buf(line, sizeof(line));
  char num[64];
  snprintf(num, sizeof(num),
           "sbx: suppressed denials=%" PRIu64 " type=", b->suppressed);
  puts_(&o, num);
  put_escaped(&o, b->type ? b->type : "unknown", SBX_AUDIT_NAME_MAX);
  snprintf(num, sizeof(num), " pid=%d", (int)b->last_pid);
  puts_(&o, num);
  emit(a, line, end_line(&o));
  b->suppressed = 0;
}

bool sbx_audit_denial(sbx_audit *a, sbx_audit_budget *b, int64_t now_ms,
                      const sbx_audit_record *rec, uint64_t *suppressed_total) {
  if (!a || a->fd < 0)
    return true;
  refill(b, now_ms);
  if (b->tokens < TOKEN) {
    b->suppressed++;
    b->last_pid = rec->pid;
    if (suppressed_total)
      (*suppressed_total)++;
    return false;
  }
  b->tokens -= TOKEN;
  write_suppressed(a, b);
  sbx_audit_write(a, rec);
  return true;
}

int64_t sbx_audit_budget_due(const sbx_audit_budget *b) {
  if (b->suppressed == 0)
    return -1;
  if (b->tokens >= TOKEN)
    return b->last_ms;
  uint64_t missing = TOKEN - b->tokens;
  uint64_t wait = (missing + SBX_AUDIT_DENIALS_PER_SECOND - 1) /
                  SBX_AUDIT_DENIALS_PER_SECOND;
  return b->last_ms + (int64_t)wait;
}

void sbx_audit_budget_flush(sbx_audit *a, sbx_audit_budget *b, int64_t now_ms,
                            bool final) {
  if (!a || a->fd < 0 || b->suppressed == 0)
    return;
  refill(b, now_ms);
  if (final || b->tokens >= TOKEN)
    write_suppressed(a, b);
}
