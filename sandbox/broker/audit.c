/* Audit lines; see audit.h.
 *
 * Trusts nothing in the strings it prints (paths come from workers), so
 * every byte that could end or fake a line is escaped.
 */
#include "sandbox/broker/audit.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "sandbox/broker/protocol.h"

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

static void put_escaped(out_buf *o, const char *s) {
  static const char hex[] = "0123456789abcdef";
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p < 0x20 || *p > 0x7e || *p == '"' || *p == '\\') {
      char esc[4] = {'\\', 'x', hex[*p >> 4], hex[*p & 15]};
      put(o, esc, 4);
    } else {
      put(o, (const char *)p, 1);
    }
  }
}

static void put_open_flags(out_buf *o, uint32_t flags) {
  static const struct {
    uint32_t bit;
    const char *name;
  } names[] = {
      {O_CREAT, "O_CREAT"},         {O_EXCL, "O_EXCL"},
      {O_NOCTTY, "O_NOCTTY"},       {O_TRUNC, "O_TRUNC"},
      {O_APPEND, "O_APPEND"},       {O_NONBLOCK, "O_NONBLOCK"},
      {O_DSYNC, "O_DSYNC"},         {04000000, "__O_SYNC"},
      {O_DIRECT, "O_DIRECT"},       {0100000, "O_LARGEFILE"},
      {O_DIRECTORY, "O_DIRECTORY"}, {O_NOFOLLOW, "O_NOFOLLOW"},
      {O_NOATIME, "O_NOATIME"},     {O_CLOEXEC, "O_CLOEXEC"},
      {020000000, "__O_TMPFILE"},   {010000000, "O_PATH"},
      {020000, "O_ASYNC"},
  };
  static const char *const acc[] = {"O_RDONLY", "O_WRONLY", "O_RDWR",
                                    "O_ACCMODE"};
  puts_(o, acc[flags & 3]);
  uint32_t rest = flags & ~3u;
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
    if (rest & names[i].bit) {
      puts_(o, "|");
      puts_(o, names[i].name);
      rest &= ~names[i].bit;
    }
  }
  if (rest) {
    char num[16];
    snprintf(num, sizeof(num), "|0x%x", rest);
    puts_(o, num);
  }
}

static void put_access_mode(out_buf *o, uint32_t mode) {
  if (mode == 0) {
    puts_(o, "F_OK");
    return;
  }
  bool first = true;
  static const struct {
    uint32_t bit;
    const char *name;
  } names[] = {{R_OK, "R_OK"}, {W_OK, "W_OK"}, {X_OK, "X_OK"}};
  for (size_t i = 0; i < 3; i++) {
    if (mode & names[i].bit) {
      if (!first)
        puts_(o, "|");
      puts_(o, names[i].name);
      first = false;
    }
  }
  if (mode & ~7u) {
    char num[16];
    snprintf(num, sizeof(num), "%s0x%x", first ? "" : "|", mode & ~7u);
    puts_(o, num);
  }
}

size_t sbx_audit_format(const sbx_audit_record *rec, char *buf,
                        size_t size) {
  if (size < 2) {
    if (size)
      buf[0] = '\0';
    return 0;
  }
  out_buf o = {buf, size - 1, 0}; /* keep room for the '\n' */
  char num[64];
  puts_(&o, rec->granted ? "sbx: granted op=" : "sbx: denied op=");
  puts_(&o, rec->op ? rec->op : "unknown");
  if (rec->path) {
    puts_(&o, " path=\"");
    put_escaped(&o, rec->path);
    puts_(&o, "\"");
  }
  if (rec->path2) {
    puts_(&o, " path2=\"");
    put_escaped(&o, rec->path2);
    puts_(&o, "\"");
  }
  puts_(&o, " flags=");
  if (rec->command == SBX_BROKER_CMD_OPEN) {
    put_open_flags(&o, rec->flags);
  } else if (rec->command == SBX_BROKER_CMD_ACCESS) {
    put_access_mode(&o, rec->flags);
  } else {
    snprintf(num, sizeof(num), "0x%x", rec->flags);
    puts_(&o, num);
  }
  puts_(&o, " type=");
  put_escaped(&o, rec->type ? rec->type : "unknown");
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
    put_escaped(&o, rec->reason);
    puts_(&o, "\"");
  }
  buf[o.len++] = '\n';
  buf[o.len] = '\0';
  return o.len;
}

void sbx_audit_write(const sbx_audit *audit, const sbx_audit_record *rec) {
  if (!audit || audit->fd < 0)
    return;
  if (rec->granted && !audit->log_grants)
    return;
  char line[4 * 2 * PATH_MAX + 512];
  size_t n = sbx_audit_format(rec, line, sizeof(line));
  ssize_t w;
  do {
    w = write(audit->fd, line, n);
  } while (w < 0 && errno == EINTR);
}
