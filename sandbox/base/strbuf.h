/* A fixed-size text buffer for code that may not allocate: reports and
 * error lines built between fork and exec or in a signal handler.
 *
 * Why it exists: snprintf is not async-signal-safe, and the status and
 * Landlock reports must be printable from a freshly forked worker. Appends
 * never overflow; they keep counting, so the caller learns the length the
 * whole text needed (like snprintf's return value).
 *
 * Everything here is Async-signal-safe and allocates nothing.
 */
#ifndef SBX_BASE_STRBUF_H_
#define SBX_BASE_STRBUF_H_

#include <stddef.h>
#include <stdint.h>

typedef struct {
  char *buf;  /* caller's storage; may be NULL when cap == 0 */
  size_t cap; /* bytes available, including the NUL */
  size_t len; /* bytes the text needs so far (may exceed cap - 1) */
} sbx_strbuf;

/* Starts an empty text in buf[0..cap). */
void sbx_strbuf_init(sbx_strbuf *sb, char *buf, size_t cap);
void sbx_strbuf_add(sbx_strbuf *sb, const char *s);
void sbx_strbuf_add_char(sbx_strbuf *sb, char c);
void sbx_strbuf_add_u64(sbx_strbuf *sb, uint64_t v);
void sbx_strbuf_add_i64(sbx_strbuf *sb, int64_t v);
void sbx_strbuf_add_hex(sbx_strbuf *sb, uint64_t v); /* "0x1f" */
/* The full length needed; the buffer is NUL-terminated if cap > 0. */
size_t sbx_strbuf_finish(sbx_strbuf *sb);

/* Parses a decimal unsigned number at *p, advancing *p; returns 0 or -1
 * when no digit is there or it overflows. */
int sbx_parse_u64(const char **p, uint64_t *out);
/* Parses hex digits (no prefix) at *p, advancing *p. */
int sbx_parse_hex64(const char **p, uint64_t *out);

#endif /* SBX_BASE_STRBUF_H_ */
