/* libFuzzer target: the decoder of file-system calls on arbitrary
 * registers and memory, and normalising in place on arbitrary paths.
 * Memory is the input itself, read through a reader that refuses what
 * lies outside it, as /proc/TID/mem refuses unmapped pages. Checks the
 * decoder's promises: a decoded request names its row, carries its paths
 * NUL-terminated with their lengths, never AT_EMPTY_PATH, and only flags
 * the row accepts where the kernel refuses others; a normalised path is
 * valid and agrees with the lexical join. */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox/base/path.h"
#include "sandbox/files/fs_calls.h"
#include "sandbox/files/fs_decode.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct {
  const uint8_t *data;
  size_t size;
} memory;

/* An address is an offset into the input plus one (0 stays NULL). */
static ssize_t fuzz_read_string(void *ctx, uint64_t addr, char *buf,
                                size_t size) {
  const memory *m = ctx;
  if (addr == 0 || addr > m->size)
    return -EFAULT;
  const uint8_t *s = m->data + (addr - 1);
  size_t room = m->size - (size_t)(addr - 1);
  size_t n = 0;
  while (n < room && n < size && s[n] != '\0')
    n++;
  if (n == size)
    return -ENAMETOOLONG;
  if (n == room)
    return -EFAULT; /* the string runs off the end of memory */
  memcpy(buf, s, n + 1);
  return (ssize_t)n;
}

static int fuzz_read(void *ctx, uint64_t addr, void *buf, size_t len) {
  const memory *m = ctx;
  if (addr == 0 || addr > m->size || m->size - (addr - 1) < len)
    return -EFAULT;
  memcpy(buf, m->data + (addr - 1), len);
  return 0;
}

static void check_request(const sbx_fs_call *call, const sbx_fs_request *q) {
  if (q->call != call || (q->op != call->op && q->op != call->alt_op))
    abort();
  if (q->at_flags & AT_EMPTY_PATH)
    abort();
  if ((call->traits & SBX_FS_STRICT_FLAGS) && (q->flags & ~call->flags_mask))
    abort();
  if (q->at_flags & ~(call->at_flags_mask | call->fixed_at_flags))
    abort();
  if (q->form == SBX_FS_FORM_PATH &&
      sbx_fs_call_arg(call, SBX_FS_ARG_PATH) >= 0)
    if (!q->path || q->path_len == 0 || strlen(q->path) != q->path_len)
      abort();
  if (q->form != SBX_FS_FORM_PATH && q->path)
    abort();
  if (q->path2 && (q->path2_len == 0 || strlen(q->path2) != q->path2_len))
    abort();
}

static void check_normalise(const uint8_t *data, size_t size) {
  char buf[PATH_MAX];
  if (size == 0 || size >= sizeof(buf) || data[0] != '/' ||
      memchr(data, '\0', size))
    return;
  memcpy(buf, data, size);
  buf[size] = '\0';
  size_t n = sbx_fs_normalize_absolute(buf, size);
  if (n > size || strlen(buf) != n || sbx_path_validate(buf, n, NULL) != 0)
    abort();
  char joined[PATH_MAX];
  int j = sbx_path_join_link("/", 1, (const char *)data, size, joined,
                             sizeof(joined));
  if (j != (int)n || strcmp(joined, buf) != 0)
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  check_normalise(data, size);
  if (size < 1 + 6 * 8)
    return 0;
  const sbx_fs_call *call = sbx_fs_call_at(data[0] % sbx_fs_call_count());
  uint64_t args[6];
  memcpy(args, data + 1, sizeof(args));
  /* Pointers into the input, most of the time. */
  for (int i = 0; i < 6; i++)
    if (!(args[i] >> 63))
      args[i] %= size + 2;
  memory m = {data, size};
  sbx_fs_reader reader = {fuzz_read_string, fuzz_read, &m};
  static char path[PATH_MAX], path2[PATH_MAX];
  sbx_fs_request q;
  int rc = sbx_fs_decode(call, args, &reader, path, path2, &q);
  if (rc == 0)
    check_request(call, &q);
  else if (rc > 0 || (rc < -4095 && rc != SBX_FS_GONE))
    abort();
  return 0;
}
