/* Allocation-free text building for reports made between fork and exec.
 * Trusts nothing but its arguments; never writes past cap. */
#include "sandbox/base/strbuf.h"

void sbx_strbuf_init(sbx_strbuf *sb, char *buf, size_t cap) {
  sb->buf = buf;
  sb->cap = cap;
  sb->len = 0;
  if (cap > 0)
    buf[0] = '\0';
}

void sbx_strbuf_add_char(sbx_strbuf *sb, char c) {
  if (sb->cap > 0 && sb->len + 1 < sb->cap)
    sb->buf[sb->len] = c;
  sb->len++;
}

void sbx_strbuf_add(sbx_strbuf *sb, const char *s) {
  if (!s)
    s = "(null)";
  for (; *s; s++)
    sbx_strbuf_add_char(sb, *s);
}

void sbx_strbuf_add_u64(sbx_strbuf *sb, uint64_t v) {
  char tmp[21];
  int n = 0;
  do {
    tmp[n++] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  while (n > 0)
    sbx_strbuf_add_char(sb, tmp[--n]);
}

void sbx_strbuf_add_i64(sbx_strbuf *sb, int64_t v) {
  if (v < 0) {
    sbx_strbuf_add_char(sb, '-');
    sbx_strbuf_add_u64(sb, (uint64_t)0 - (uint64_t)v);
  } else {
    sbx_strbuf_add_u64(sb, (uint64_t)v);
  }
}

void sbx_strbuf_add_hex(sbx_strbuf *sb, uint64_t v) {
  static const char digits[] = "0123456789abcdef";
  char tmp[16];
  int n = 0;
  do {
    tmp[n++] = digits[v & 0xf];
    v >>= 4;
  } while (v);
  sbx_strbuf_add(sb, "0x");
  while (n > 0)
    sbx_strbuf_add_char(sb, tmp[--n]);
}

size_t sbx_strbuf_finish(sbx_strbuf *sb) {
  if (sb->cap > 0)
    sb->buf[sb->len < sb->cap ? sb->len : sb->cap - 1] = '\0';
  return sb->len;
}

int sbx_parse_u64(const char **p, uint64_t *out) {
  const char *s = *p;
  uint64_t v = 0;
  if (*s < '0' || *s > '9')
    return -1;
  for (; *s >= '0' && *s <= '9'; s++) {
    uint64_t d = (uint64_t)(*s - '0');
    if (v > (UINT64_MAX - d) / 10)
      return -1;
    v = v * 10 + d;
  }
  *p = s;
  *out = v;
  return 0;
}

static int hex_value(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

int sbx_parse_hex64(const char **p, uint64_t *out) {
  const char *s = *p;
  uint64_t v = 0;
  int n = 0;
  for (; hex_value(*s) >= 0; s++, n++) {
    if (n >= 16)
      return -1;
    v = (v << 4) | (uint64_t)hex_value(*s);
  }
  if (n == 0)
    return -1;
  *p = s;
  *out = v;
  return 0;
}
