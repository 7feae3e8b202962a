/* The zygote's executable mappings; see code_pages.h.
 *
 * Trusts /proc/self/maps's format; a line it cannot read is skipped.
 */
#include "sandbox/zygote/code_pages.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22 /* Linux 5.14 */
#endif

/* The hexadecimal number at *p, advancing *p past it; false when none. */
static bool hex(const char **p, const char *end, uintptr_t *out) {
  uintptr_t v = 0;
  const char *s = *p;
  for (; *p < end; (*p)++) {
    char c = **p;
    int d = c >= '0' && c <= '9'   ? c - '0'
            : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                   : -1;
    if (d < 0)
      break;
    v = v * 16 + (uintptr_t)d;
  }
  *out = v;
  return *p > s;
}

/* "START-END PERMS ...": keeps the range when PERMS has x. */
static void add_line(sbx_code_ranges *out, const char *line, size_t len) {
  const char *p = line, *end = line + len;
  uintptr_t start, stop;
  if (!hex(&p, end, &start) || p >= end || *p++ != '-' ||
      !hex(&p, end, &stop) || end - p < 5 || *p++ != ' ')
    return;
  if (p[2] != 'x' || stop <= start || out->n == SBX_CODE_RANGES_MAX ||
      stop - start > SBX_CODE_BYTES_MAX - out->bytes)
    return;
  out->range[out->n].start = start;
  out->range[out->n].end = stop;
  out->n++;
  out->bytes += stop - start;
}

int sbx_code_ranges_read_raw(sbx_code_ranges *out) {
  out->n = 0;
  out->bytes = 0;
  int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -errno;
  char buf[4096];
  size_t have = 0;
  for (;;) {
    ssize_t n = read(fd, buf + have, sizeof(buf) - have);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    have += (size_t)n;
    size_t from = 0;
    for (size_t i = 0; i < have; i++) {
      if (buf[i] == '\n') {
        add_line(out, buf + from, i - from);
        from = i + 1;
      }
    }
    memmove(buf, buf + from, have - from);
    have -= from;
    if (have == sizeof(buf))
      have = 0; /* a line longer than the buffer: not a mapping of code */
  }
  close(fd);
  return 0;
}

void sbx_code_ranges_populate_raw(const sbx_code_ranges *ranges) {
  for (size_t i = 0; i < ranges->n; i++) {
    int saved = errno;
    syscall(SYS_madvise, ranges->range[i].start,
            ranges->range[i].end - ranges->range[i].start, MADV_POPULATE_READ);
    errno = saved;
  }
}
