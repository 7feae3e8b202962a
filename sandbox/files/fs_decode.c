/* The decoder of file-system system calls; see fs_decode.h.
 *
 * Trusts the table and the reader; refuses, with the kernel's errno, flags
 * a call does not accept and paths that cannot be read. Runs in SIGSYS
 * handlers: no allocation, no lock, no GLib, and errno left alone by the
 * local reader.
 */
#include "sandbox/files/fs_decode.h"

#include <errno.h>
#include <limits.h>
#include <linux/openat2.h>
#include <string.h>

/* Async-signal-safe. */
static ssize_t local_read_string(void *ctx, uint64_t addr, char *buf,
                                 size_t size) {
  (void)ctx;
  const char *s = (const char *)(uintptr_t)addr;
  if (s == NULL)
    return -EFAULT;
  size_t n = strnlen(s, size);
  if (n >= size)
    return -ENAMETOOLONG;
  memcpy(buf, s, n + 1);
  return (ssize_t)n;
}

/* Async-signal-safe. */
static int local_read(void *ctx, uint64_t addr, void *buf, size_t len) {
  (void)ctx;
  if (addr == 0)
    return -EFAULT;
  memcpy(buf, (const void *)(uintptr_t)addr, len);
  return 0;
}

const sbx_fs_reader sbx_fs_local_reader = {local_read_string, local_read, NULL};

/* Async-signal-safe. */
uint64_t sbx_fs_request_arg(const sbx_fs_request *q, sbx_fs_arg_role role) {
  int i = sbx_fs_call_arg(q->call, role);
  return i < 0 ? 0 : q->args[i];
}

/* Async-signal-safe. */
uint32_t sbx_fs_request_flags(const sbx_fs_request *q) {
  return sbx_fs_op_shown_flags(q->op, q->flags, q->mode, q->at_flags);
}

/* Async-signal-safe. An int-sized argument: the kernel reads the low 32
 * bits only. */
static uint32_t arg32(const sbx_fs_request *q, sbx_fs_arg_role role) {
  return (uint32_t)sbx_fs_request_arg(q, role);
}

/* Async-signal-safe. */
static bool has(const sbx_fs_call *call, sbx_fs_arg_role role) {
  return sbx_fs_call_arg(call, role) >= 0;
}

/* Async-signal-safe. openat2: struct open_how replaces flags and mode.
 * The kernel reads it before the path. */
static int read_open_how(sbx_fs_request *q, const sbx_fs_reader *reader) {
  struct open_how how;
  uint64_t size = sbx_fs_request_arg(q, SBX_FS_ARG_HOW_SIZE);
  if (size < sizeof(how))
    return -EINVAL;
  int rc = reader->read(reader->ctx, sbx_fs_request_arg(q, SBX_FS_ARG_HOW),
                        &how, sizeof(how));
  if (rc < 0)
    return rc;
  if (how.flags > UINT32_MAX || how.mode > 07777)
    return -EINVAL;
  q->flags = (uint32_t)how.flags;
  q->mode = (uint32_t)how.mode;
  q->resolve = how.resolve;
  return 0;
}

/* Async-signal-safe. The scalar arguments, as the kernel reads them. */
static void read_scalars(sbx_fs_request *q) {
  const sbx_fs_call *call = q->call;
  if (has(call, SBX_FS_ARG_DIRFD))
    q->dirfd = (int)arg32(q, SBX_FS_ARG_DIRFD);
  if (has(call, SBX_FS_ARG_DIRFD2))
    q->dirfd2 = (int)arg32(q, SBX_FS_ARG_DIRFD2);
  q->flags = has(call, SBX_FS_ARG_FLAGS) ? arg32(q, SBX_FS_ARG_FLAGS)
                                         : call->fixed_flags;
  q->mode = arg32(q, SBX_FS_ARG_MODE);
  q->at_flags = arg32(q, SBX_FS_ARG_AT_FLAGS) | call->fixed_at_flags;
  q->mask = arg32(q, SBX_FS_ARG_MASK);
}

/* Async-signal-safe. The flags and the rules beyond masks; 0 or -EINVAL.
 * The kernel checks these before it reads a path. */
static int check_flags(sbx_fs_request *q, const sbx_fs_reader *reader) {
  const sbx_fs_call *call = q->call;
  if ((call->traits & SBX_FS_STRICT_FLAGS) && has(call, SBX_FS_ARG_FLAGS) &&
      (q->flags & ~call->flags_mask))
    return -EINVAL;
  if (q->at_flags & ~(call->at_flags_mask | call->fixed_at_flags))
    return -EINVAL;
  if (call->alt_at_flag && (q->at_flags & call->alt_at_flag))
    q->op = call->alt_op;
  if (has(call, SBX_FS_ARG_MASK) && sbx_fs_check_statx(q->at_flags, q->mask))
    return -EINVAL;
  if (q->op == SBX_FS_OP_RENAME && sbx_fs_check_rename(q->flags))
    return -EINVAL;
  /* readlink(2)'s bufsiz is an int. */
  if (q->op == SBX_FS_OP_READLINK && (int)arg32(q, SBX_FS_ARG_SIZE) <= 0)
    return -EINVAL;
  if (has(call, SBX_FS_ARG_HOW)) {
    int rc = read_open_how(q, reader);
    if (rc < 0)
      return rc;
    if (q->flags & ~call->flags_mask)
      return -EINVAL;
  }
  return 0;
}

/* Async-signal-safe. Copies one path; "" is -ENOENT unless empty_ok. */
static int read_path(const sbx_fs_reader *reader, uint64_t addr, char *buf,
                     bool empty_ok, size_t *len) {
  ssize_t n = reader->read_string(reader->ctx, addr, buf, PATH_MAX);
  if (n < 0)
    return (int)n;
  if (n == 0 && !empty_ok)
    return -ENOENT;
  *len = (size_t)n;
  return 0;
}

/* Async-signal-safe. The first path, or the descriptor form it stands
 * for. */
static int read_first_path(sbx_fs_request *q, const sbx_fs_reader *reader,
                           char *path) {
  const sbx_fs_call *call = q->call;
  uint64_t addr = sbx_fs_request_arg(q, SBX_FS_ARG_PATH);
  bool empty_path = (q->at_flags & AT_EMPTY_PATH) != 0;
  if (addr == 0 && (call->traits & SBX_FS_NULL_PATH_IS_FD) &&
      q->dirfd != AT_FDCWD) {
    /* The kernel refuses any flag on this form. */
    if (q->at_flags & ~call->fixed_at_flags)
      return -EINVAL;
    q->form = SBX_FS_FORM_FD;
    q->fd = q->dirfd;
    return 0;
  }
  if (addr == 0 && (call->traits & SBX_FS_NULL_PATH_EMPTY) && empty_path) {
    q->form = SBX_FS_FORM_EMPTY_PATH;
    q->fd = q->dirfd;
    return 0;
  }
  size_t len = 0;
  int rc = read_path(reader, addr, path, empty_path, &len);
  if (rc < 0)
    return rc;
  if (len == 0) {
    q->form = SBX_FS_FORM_EMPTY_PATH;
    q->fd = q->dirfd;
    return 0;
  }
  q->path = path;
  q->path_len = len;
  return 0;
}

/* Async-signal-safe. */
int sbx_fs_decode(const sbx_fs_call *call, const uint64_t args[6],
                  const sbx_fs_reader *reader, char *path, char *path2,
                  sbx_fs_request *out) {
  memset(out, 0, sizeof(*out));
  out->call = call;
  out->op = call->op;
  out->form = SBX_FS_FORM_PATH;
  out->dirfd = AT_FDCWD;
  out->dirfd2 = AT_FDCWD;
  out->fd = -1;
  memcpy(out->args, args, sizeof(out->args));
  read_scalars(out);
  int rc = check_flags(out, reader);
  if (rc < 0)
    return rc;
  if (has(call, SBX_FS_ARG_FD)) {
    out->form = SBX_FS_FORM_FD;
    out->fd = (int)arg32(out, SBX_FS_ARG_FD);
  }
  if (has(call, SBX_FS_ARG_PATH)) {
    rc = read_first_path(out, reader, path);
    if (rc < 0)
      return rc;
  }
  if (has(call, SBX_FS_ARG_PATH2)) {
    if (path2 == NULL)
      return -EINVAL;
    rc = read_path(reader, sbx_fs_request_arg(out, SBX_FS_ARG_PATH2), path2,
                   false, &out->path2_len);
    if (rc < 0)
      return rc;
    out->path2 = path2;
  }
  /* AT_EMPTY_PATH has done its work: it chose the form. */
  out->at_flags &= ~(uint32_t)AT_EMPTY_PATH;
  return 0;
}

/* Async-signal-safe. Reading and writing run through the same buffer;
 * the output never overtakes the input, because normalising only ever
 * removes bytes. */
size_t sbx_fs_normalize_absolute(char *path, size_t len) {
  size_t w = 1; /* path[0] is '/' */
  size_t r = 1;
  while (r < len) {
    while (r < len && path[r] == '/')
      r++;
    size_t start = r;
    while (r < len && path[r] != '/')
      r++;
    size_t n = r - start;
    if (n == 0 || (n == 1 && path[start] == '.'))
      continue;
    if (n == 2 && path[start] == '.' && path[start + 1] == '.') {
      while (w > 1 && path[w - 1] != '/')
        w--;
      if (w > 1)
        w--; /* the slash before the component removed */
      continue;
    }
    if (w > 1)
      path[w++] = '/';
    memmove(path + w, path + start, n);
    w += n;
  }
  path[w] = '\0';
  return w;
}

/* Async-signal-safe. */
bool sbx_fs_directory_form(sbx_fs_request *q, sbx_fs_dir_form *form) {
  if (q->form != SBX_FS_FORM_PATH || q->path == NULL || q->path_len == 0)
    return false;
  const char *p = q->path;
  size_t len = q->path_len;
  size_t i = len;
  while (i > 0 && p[i - 1] != '/')
    i--;
  bool slash = p[len - 1] == '/';
  bool dot = len - i == 1 && p[i] == '.';
  bool dotdot = len - i == 2 && p[i] == '.' && p[i + 1] == '.';
  if (!slash && !dot && !dotdot)
    return false;
  if (q->op == SBX_FS_OP_MKDIR || q->op == SBX_FS_OP_SYMLINK ||
      q->op == SBX_FS_OP_LINK || q->op == SBX_FS_OP_MKNOD)
    return false;
  memset(form, 0, sizeof(*form));
  q->at_flags &= ~(uint32_t)AT_SYMLINK_NOFOLLOW;
  switch (q->op) {
    case SBX_FS_OP_RMDIR:
      form->error = dot ? EINVAL : dotdot ? ENOTEMPTY : 0;
      form->if_not_dir = ENOTDIR;
      break;
    case SBX_FS_OP_RENAME:
      form->error = slash ? 0 : EBUSY;
      form->if_not_dir = ENOTDIR;
      break;
    case SBX_FS_OP_UNLINK:
      form->error = slash ? 0 : EISDIR;
      form->if_dir = EISDIR;
      form->if_not_dir = ENOTDIR;
      break;
    case SBX_FS_OP_OPEN:
      q->flags &= ~(uint32_t)O_NOFOLLOW;
      if (q->flags & O_CREAT) {
        /* Refused once the directory above is found. */
        form->parent = true;
        form->follow = true;
        form->if_dir = EISDIR;
      } else {
        q->flags |= O_DIRECTORY;
        return true; /* the open itself answers ENOTDIR */
      }
      break;
    case SBX_FS_OP_READLINK:
      /* Followed, the name leaves no link to read. */
      form->follow = true;
      form->if_dir = EINVAL;
      form->if_not_dir = ENOTDIR;
      break;
    default:
      form->follow = true;
      form->if_not_dir = ENOTDIR;
      break;
  }
  form->look = form->error == 0;
  return true;
}
