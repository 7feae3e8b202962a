/* The target of a notification; see target.h.
 *
 * Trusts /proc and the seccomp listener. Every value read from the target
 * is checked against SECCOMP_IOCTL_NOTIF_ID_VALID before it is returned.
 */
#include "sandbox/kernel/unotify/target.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "sandbox/base/path.h"
#include "sandbox/kernel/unotify/notify.h"

#define PAGE 4096u

void sbx_target_init(sbx_unotify_target *t, int listener, uint64_t id,
                     pid_t tid) {
  t->listener = listener;
  t->id = id;
  t->tid = tid;
  t->tgid = 0;
  t->mem_fd = -1;
}

void sbx_target_release(sbx_unotify_target *t) {
  if (t->mem_fd >= 0)
    close(t->mem_fd);
  t->mem_fd = -1;
}

int sbx_target_valid(const sbx_unotify_target *t) {
  return sbx_unotify_id_valid(t->listener, t->id);
}

/* Opens /proc/TID/mem and proves, after the open, that TID is still the
 * caller: from then on the descriptor reaches that address space only. */
static int open_mem(sbx_unotify_target *t) {
  if (t->mem_fd >= 0)
    return 0;
  char path[64];
  snprintf(path, sizeof(path), "/proc/%d/mem", (int)t->tid);
  int fd = open(path, O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    return sbx_target_valid(t) < 0 ? -ENOENT : -err;
  }
  int rc = sbx_target_valid(t);
  if (rc < 0) {
    close(fd);
    return rc;
  }
  t->mem_fd = fd;
  return 0;
}

/* NULL never names target memory; anything else needs the mem fd. */
static int open_mem_at(sbx_unotify_target *t, uint64_t addr) {
  return addr == 0 ? -EFAULT : open_mem(t);
}

static int read_some(sbx_unotify_target *t, uint64_t addr, void *buf,
                     size_t len, size_t *got) {
  *got = 0;
  if (addr > (uint64_t)INT64_MAX - len)
    return -EFAULT;
  ssize_t n = pread(t->mem_fd, buf, len, (off_t)addr);
  if (n < 0)
    return errno == EIO || errno == EINVAL ? -EFAULT : -errno;
  *got = (size_t)n;
  return 0;
}

ssize_t sbx_target_read_string(sbx_unotify_target *t, uint64_t addr, char *buf,
                               size_t size) {
  int rc = open_mem_at(t, addr);
  if (rc < 0)
    return rc;
  size_t have = 0;
  while (have < size) {
    /* Never cross a page boundary in one read: the next page may be
     * unmapped even though the string ends before it. */
    uint64_t at = addr + have;
    size_t chunk = PAGE - (size_t)(at % PAGE);
    if (chunk > size - have)
      chunk = size - have;
    size_t got;
    rc = read_some(t, at, buf + have, chunk, &got);
    if (rc < 0 || got == 0) {
      if (sbx_target_valid(t) < 0)
        return -ENOENT;
      return rc < 0 ? rc : -EFAULT;
    }
    char *nul = memchr(buf + have, '\0', got);
    if (nul) {
      if (sbx_target_valid(t) < 0)
        return -ENOENT;
      return (ssize_t)(nul - buf);
    }
    have += got;
  }
  if (sbx_target_valid(t) < 0)
    return -ENOENT;
  return -ENAMETOOLONG;
}

int sbx_target_read(sbx_unotify_target *t, uint64_t addr, void *buf,
                    size_t len) {
  int rc = open_mem_at(t, addr);
  if (rc < 0)
    return rc;
  size_t have = 0;
  while (have < len) {
    size_t got;
    rc = read_some(t, addr + have, (char *)buf + have, len - have, &got);
    if (rc < 0 || got == 0)
      break;
    have += got;
  }
  if (sbx_target_valid(t) < 0)
    return -ENOENT;
  if (have < len)
    return rc < 0 ? rc : -EFAULT;
  return 0;
}

int sbx_target_write(sbx_unotify_target *t, uint64_t addr, const void *buf,
                     size_t len) {
  int rc = open_mem_at(t, addr);
  if (rc < 0)
    return rc;
  rc = sbx_target_valid(t);
  if (rc < 0)
    return rc;
  if (addr > (uint64_t)INT64_MAX - len)
    return -EFAULT;
  size_t done = 0;
  while (done < len) {
    ssize_t n = pwrite(t->mem_fd, (const char *)buf + done, len - done,
                       (off_t)(addr + done));
    if (n <= 0)
      return -EFAULT;
    done += (size_t)n;
  }
  return 0;
}

/* The last number on the line of /proc/TID/status that starts with key
 * ("\nTgid:"; a list such as NStgid ends with the innermost pid
 * namespace's), or 0; checked against a target that went away. */
static long status_number(sbx_unotify_target *t, const char *key) {
  char path[64];
  snprintf(path, sizeof(path), "/proc/%d/status", (int)t->tid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return 0;
  char buf[4096];
  ssize_t n = read(fd, buf, sizeof(buf) - 1);
  close(fd);
  if (n <= 0)
    return 0;
  buf[n] = '\0';
  const char *line = strstr(buf, key);
  if (!line)
    return 0;
  const char *p = line + strlen(key);
  long v = 0;
  for (;;) {
    char *end;
    long x = strtol(p, &end, 10);
    if (end == p)
      break;
    v = x;
    p = end;
    if (*p == '\n' || *p == '\0')
      break;
  }
  if (v <= 0 || sbx_target_valid(t) < 0)
    return 0;
  return v;
}

pid_t sbx_target_tgid(sbx_unotify_target *t) {
  if (t->tgid <= 0)
    t->tgid = (pid_t)status_number(t, "\nTgid:");
  return t->tgid;
}

pid_t sbx_target_ns_tgid(sbx_unotify_target *t) {
  return (pid_t)status_number(t, "\nNStgid:");
}

pid_t sbx_target_ns_tid(sbx_unotify_target *t) {
  return (pid_t)status_number(t, "\nNSpid:");
}

int sbx_target_fd_proc_path(const sbx_unotify_target *t, int fd, char *buf,
                            size_t size) {
  if (fd == AT_FDCWD)
    return snprintf(buf, size, "/proc/%d/cwd", (int)t->tid);
  return snprintf(buf, size, "/proc/%d/fd/%d", (int)t->tid, fd);
}

int sbx_target_fd_path(sbx_unotify_target *t, int fd, char *buf, size_t size) {
  if (fd < 0 && fd != AT_FDCWD)
    return -EBADF;
  char link[64];
  sbx_target_fd_proc_path(t, fd, link, sizeof(link));
  ssize_t n = readlink(link, buf, size);
  int err = errno;
  if (sbx_target_valid(t) < 0)
    return -ENOENT;
  if (n < 0)
    return err == ENOENT ? -EBADF : -err;
  if ((size_t)n >= size)
    return -ENAMETOOLONG;
  buf[n] = '\0';
  if (buf[0] != '/')
    return -ENOTDIR;
  static const char deleted[] = " (deleted)";
  size_t dl = sizeof(deleted) - 1;
  if ((size_t)n > dl && memcmp(buf + n - dl, deleted, dl) == 0)
    return -ENOENT;
  return (int)n;
}

int sbx_target_read_path(sbx_unotify_target *t, int dirfd, uint64_t addr,
                         char *out, unsigned flags) {
  char raw[PATH_MAX];
  ssize_t n = sbx_target_read_string(t, addr, raw, sizeof(raw));
  if (n == -ENOENT)
    return SBX_TARGET_GONE;
  if (n < 0)
    return (int)n;
  if (n == 0)
    return (flags & SBX_TARGET_PATH_EMPTY_OK) ? SBX_TARGET_PATH_EMPTY : -ENOENT;
  return sbx_target_absolute_path(t, dirfd, raw, (size_t)n, out);
}

int sbx_target_absolute_path(sbx_unotify_target *t, int dirfd, const char *raw,
                             size_t n, char *out) {
  if (n == 0)
    return -ENOENT;
  char base[PATH_MAX];
  int blen = 1;
  base[0] = '/';
  base[1] = '\0';
  if (raw[0] != '/') {
    blen = sbx_target_fd_path(t, dirfd, base, sizeof(base));
    if (blen < 0)
      return sbx_target_valid(t) < 0 ? SBX_TARGET_GONE : blen;
  }
  int len = sbx_path_join_link(base, (size_t)blen, raw, n, out, PATH_MAX);
  return len < 0 ? len : 0;
}
