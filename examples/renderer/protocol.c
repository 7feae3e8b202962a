/* Framing helpers and the host's check of a worker's answer (see
 * protocol.h). */
#include "examples/renderer/protocol.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

static bool terminated(const char *s, size_t cap) {
  return memchr(s, '\0', cap) != NULL;
}

bool demo_result_check(const demo_result *r, size_t header_len,
                       const char **why) {
  if (header_len != sizeof *r) {
    *why = "short header";
    return false;
  }
  if (r->magic != DEMO_RESULT_MAGIC) {
    *why = "bad magic";
    return false;
  }
  if (r->text_len > DEMO_TEXT_MAX || r->image_len > DEMO_IMAGE_MAX ||
      r->status_len > DEMO_STATUS_MAX) {
    *why = "length over its limit";
    return false;
  }
  if (r->n_escapes > DEMO_MAX_ESCAPES) {
    *why = "too many escape requests";
    return false;
  }
  if (!terminated(r->error, sizeof r->error) ||
      !terminated(r->attack_detail, sizeof r->attack_detail)) {
    *why = "unterminated string";
    return false;
  }
  for (uint32_t i = 0; i < r->n_escapes; i++) {
    if (!terminated(r->escapes[i], sizeof r->escapes[i])) {
      *why = "unterminated escape name";
      return false;
    }
  }
  return true;
}

bool demo_write_all(int fd, const void *buf, size_t len) {
  const char *p = buf;
  while (len > 0) {
    ssize_t n = write(fd, p, len);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    p += n;
    len -= (size_t)n;
  }
  return true;
}

ssize_t demo_read_full(int fd, void *buf, size_t len, int timeout_ms) {
  char *p = buf;
  size_t got = 0;
  while (got < len) {
    struct pollfd pfd = {.fd = fd, .events = POLLIN};
    int rc = poll(&pfd, 1, timeout_ms);
    if (rc < 0 && errno == EINTR)
      continue;
    if (rc <= 0) {
      errno = rc == 0 ? ETIMEDOUT : errno;
      return -1;
    }
    ssize_t n = read(fd, p + got, len - got);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return -1;
    if (n == 0)
      break;
    got += (size_t)n;
  }
  return (ssize_t)got;
}
