/* The zygote's executable mappings; see code_pages.h.
 *
 * Trusts /proc/self/maps's format; a line it cannot read is skipped.
 */
#include "sandbox/zygote/code_pages.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sandbox/base/strbuf.h"

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22 /* Linux 5.14 */
#endif

/* "START-END PERMS ...": keeps the range when PERMS has x. The line
 * ends in its newline, which stops every parse. */
static void add_line(sbx_code_ranges *out, const char *line, size_t len) {
  const char *p = line, *end = line + len;
  uint64_t start, stop;
  if (sbx_parse_hex64(&p, &start) != 0 || *p++ != '-' ||
      sbx_parse_hex64(&p, &stop) != 0 || end - p < 5 || *p++ != ' ')
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
