/* Sealed memory files; see sealed.h.
 *
 * Trusts its caller's bytes; refuses nothing but what the kernel does.
 */
#include "sandbox/base/sealed.h"

#include <errno.h>
#include <unistd.h>

static int fail_closing(int fd) {
  int err = errno;
  close(fd);
  errno = err;
  return -1;
}

int sbx_sealed_file(const char *name, unsigned flags, const void *data,
                    size_t len) {
  int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING | flags);
  if (fd < 0 && errno == EINVAL && (flags & MFD_EXEC))
    fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING); /* before 6.3 */
  if (fd < 0)
    return -1;
  const char *p = data;
  while (len) {
    ssize_t n = write(fd, p, len);
    if (n < 0 && errno == EINTR)
      continue;
    if (n == 0)
      errno = EIO;
    if (n <= 0)
      return fail_closing(fd);
    p += n;
    len -= (size_t)n;
  }
  /* F_SEAL_WRITE fails with EBUSY while something in the kernel holds a
   * page of the file for a moment (page migration, compaction). The
   * kernel has then already waited a while for it and added no seal, so
   * the whole call is simply tried again, a few times. */
  for (int tries = 1; fcntl(fd, F_ADD_SEALS, SBX_SEALED_ALL) != 0; tries++) {
    if (errno != EBUSY || tries == 4)
      return fail_closing(fd);
  }
  return fd;
}
