/* Layer 1's SIGSYS handler: the broker client as one of the two executors
 * of the table of file-system calls (sandbox/files/fs_calls.h); see
 * layer1.h.
 *
 * Why it exists: it is the bridge between code that calls open(2) and a
 * broker that decides on every file. The filter (broker-client.policy)
 * traps the calls the table marks SBX_FS_LAYER1; the one handler here
 * decodes the trapped call with the shared decoder (fs_decode.h), reading
 * the worker's own memory, applies layer 1's own rules, and sends the
 * request to the broker through client.h.
 *
 * What it trusts: the registers the trap registry hands over (the kernel
 * wrote them) and the client's replies (client.c checks their shape). Path
 * strings are the worker's own memory, copied once by the decoder.
 * What it refuses, before the broker is asked:
 *   - what the decoder refuses, with the kernel's errno (unknown flags
 *     EINVAL, NULL path EFAULT, "" ENOENT, no NUL in PATH_MAX bytes
 *     ENAMETOOLONG);
 *   - relative paths, whatever the directory descriptor: EACCES (a worker
 *     has no working directory the broker could resolve against);
 *   - the descriptor forms ((fd, "", AT_EMPTY_PATH)): answered here with
 *     fstat(2) for newfstatat and statx, EACCES for the others (the broker
 *     cannot know which file a worker's descriptor names).
 * Paths that are absolute but not normalised (`//`, `.`, `..`, a trailing
 * `/`) are normalised lexically in place: `..` never climbs above `/`, and
 * the broker still decides on the object it opens, so normalising can
 * never reach more than the allowlist grants. It can differ from the
 * kernel's reading when a component before `..` is a symbolic link. A
 * name written as a directory (`name/`, `name/.`) is read first as the
 * kernel reads it (sbx_fs_directory_form: a final link followed, a
 * directory required), which the normalised name no longer says.
 *
 * Everything here runs inside the SIGSYS handler, or in the zygote and a
 * fresh worker between fork and the worker's entry: async-signal-safe
 * calls only, stack buffers only (at most two of PATH_MAX bytes), no GLib,
 * no locks. The registry preserves errno and writes the returned value
 * (>= 0 or -errno) into RAX.
 */
#include "sandbox/broker/layer1.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "sandbox/base/path.h"
#include "sandbox/files/fs_decode.h"
#include "sandbox/kernel/seccomp/trap.h"

/* Async-signal-safe. fstat(2) on a descriptor the worker already holds:
 * the kernel call, never glibc's fstat(), which is newfstatat and would
 * trap again. AT_FDCWD would mean the working directory, which a worker
 * does not have. */
static int fstat_fd(int fd, struct stat *st) {
  if (fd == AT_FDCWD)
    return -EACCES;
  long rc = syscall(SYS_fstat, (long)fd, st);
  return rc < 0 ? -errno : 0;
}

/* Async-signal-safe. What statx(fd, "", AT_EMPTY_PATH) reports, from
 * fstat(2): the basic fields; no birth time or mount id, which fstat
 * lacks. */
static int statx_fd(int fd, struct statx *out) {
  struct stat st;
  int rc = fstat_fd(fd, &st);
  if (rc < 0)
    return rc;
  struct statx stx;
  memset(&stx, 0, sizeof(stx));
  stx.stx_mask = STATX_BASIC_STATS;
  stx.stx_blksize = (uint32_t)st.st_blksize;
  stx.stx_nlink = (uint32_t)st.st_nlink;
  stx.stx_uid = st.st_uid;
  stx.stx_gid = st.st_gid;
  stx.stx_mode = (uint16_t)st.st_mode;
  stx.stx_ino = st.st_ino;
  stx.stx_size = (uint64_t)st.st_size;
  stx.stx_blocks = (uint64_t)st.st_blocks;
  stx.stx_atime.tv_sec = st.st_atim.tv_sec;
  stx.stx_atime.tv_nsec = (uint32_t)st.st_atim.tv_nsec;
  stx.stx_mtime.tv_sec = st.st_mtim.tv_sec;
  stx.stx_mtime.tv_nsec = (uint32_t)st.st_mtim.tv_nsec;
  stx.stx_ctime.tv_sec = st.st_ctim.tv_sec;
  stx.stx_ctime.tv_nsec = (uint32_t)st.st_ctim.tv_nsec;
  stx.stx_rdev_major = major(st.st_rdev);
  stx.stx_rdev_minor = minor(st.st_rdev);
  stx.stx_dev_major = major(st.st_dev);
  stx.stx_dev_minor = minor(st.st_dev);
  /* NULL is the one bad buffer a handler can tell from a good one. */
  if (out == NULL)
    return -EFAULT;
  memcpy(out, &stx, sizeof(stx));
  return 0;
}

/* Async-signal-safe. */
static bool is_statx(const sbx_fs_request *q) {
  return sbx_fs_call_arg(q->call, SBX_FS_ARG_MASK) >= 0;
}

/* Async-signal-safe. */
static void *buffer_of(const sbx_fs_request *q) {
  return (void *)(uintptr_t)sbx_fs_request_arg(q, SBX_FS_ARG_BUF);
}

/* Async-signal-safe. A call on a descriptor the worker holds: stat forms
 * are answered from the descriptor, the rest cannot be served. */
static intptr_t answer_descriptor(const sbx_fs_request *q) {
  if (q->op != SBX_FS_OP_STAT)
    return -EACCES;
  if (is_statx(q))
    return statx_fd(q->fd, buffer_of(q));
  return fstat_fd(q->fd, buffer_of(q));
}

/* Async-signal-safe. Makes a decoded path acceptable to the broker:
 * absolute (or EACCES), then normalised in place. */
static int broker_path(char *path, size_t *len) {
  if (path[0] != '/')
    return -EACCES;
  if (sbx_path_validate(path, *len, NULL) != 0)
    *len = sbx_fs_normalize_absolute(path, *len);
  return 0;
}

/* The flags a direct open may carry: read-only, nothing that creates,
 * truncates, or asks for a descriptor without an open (O_PATH). The
 * kernel's O_LARGEFILE, which libc may pass, is harmless. */
#define DIRECT_OPEN_FLAGS                                         \
  (O_CLOEXEC | O_NOCTTY | O_NOFOLLOW | O_DIRECTORY | O_NONBLOCK | \
   0100000 /* O_LARGEFILE */)

/* The trees a direct open can reach, when the root holds nothing else
 * (sbx_layer1_register_traps_raw); NULL: unknown. Written before the
 * registry is frozen, read-only after. */
static const char *direct_roots;
static size_t direct_roots_len;

/* Async-signal-safe. Could a direct open of path (normalised, len bytes)
 * succeed? In the empty root only at or below a bound tree: every other
 * name is missing there, or /proc, which Landlock refuses, so the
 * openat2 (whose failed walk costs the root's file system a dentry made
 * and dropped) is left out and the broker answers as it would have. */
static bool may_be_direct(const char *path, size_t len) {
  if (!direct_roots)
    return true;
  for (size_t at = 0; at < direct_roots_len;) {
    const char *tree = direct_roots + at;
    size_t n = strlen(tree); /* with its trailing '/' */
    if (n > 1 && len >= n - 1 && memcmp(path, tree, n - 1) == 0 &&
        (len == n - 1 || path[n - 1] == '/'))
      return true;
    at += n + 1;
  }
  return false;
}

/* Async-signal-safe. Direct opens (docs/design.md, "Direct opens"): a
 * read-only open is tried with openat2 first (in the empty root, only at
 * or below a bound tree: may_be_direct). Where the worker's filters
 * allow openat2, its Landlock ruleset grants read of the type's direct
 * trees and nothing else, so the kernel decides on the object the walk
 * reaches: success only for a file under a direct tree. Anywhere else
 * the call fails (ENOSYS from the filters of a type without direct trees,
 * after which this process does not try again; EACCES from Landlock,
 * ENOENT in the empty root, ELOOP on a magic link) and the request goes
 * to the broker as always, so every answer other than a direct success
 * is the broker's. Returns the descriptor or -1. */
/* Set once this process's filters answered openat2 with ENOSYS (a type
 * without direct trees): its read-only opens then go straight to the
 * broker, with no extra call. Inherited by forks, which run under the
 * same filters. */
static int direct_refused;

static int open_directly(const sbx_fs_request *q) {
  if (q->op != SBX_FS_OP_OPEN || (q->flags & O_ACCMODE) != O_RDONLY ||
      (q->flags & ~(uint64_t)(O_ACCMODE | DIRECT_OPEN_FLAGS)) ||
      __atomic_load_n(&direct_refused, __ATOMIC_RELAXED) ||
      !may_be_direct(q->path, q->path_len))
    return -1;
  struct open_how how;
  memset(&how, 0, sizeof how);
  how.flags = q->flags;
  how.resolve = RESOLVE_NO_MAGICLINKS;
  int saved = errno;
  long fd = syscall(SYS_openat2, (long)AT_FDCWD, q->path, &how, sizeof how);
  if (fd < 0 && errno == ENOSYS)
    __atomic_store_n(&direct_refused, 1, __ATOMIC_RELAXED);
  errno = saved;
  return fd < 0 ? -1 : (int)fd;
}

/* Async-signal-safe. The one place a decoded request becomes a broker
 * request. */
static intptr_t send_to_broker(const sbx_broker_client *client,
                               const sbx_fs_request *q) {
  switch (q->op) {
    case SBX_FS_OP_OPEN:
      return sbx_broker_open(client, q->path, (int)q->flags, (mode_t)q->mode);
    case SBX_FS_OP_STAT:
      if (is_statx(q))
        return sbx_broker_statx(client, q->path, (int)q->at_flags, q->mask,
                                buffer_of(q));
      if (q->at_flags & AT_SYMLINK_NOFOLLOW)
        return sbx_broker_lstat(client, q->path, buffer_of(q));
      return sbx_broker_stat(client, q->path, buffer_of(q));
    case SBX_FS_OP_ACCESS:
      return sbx_broker_access(client, q->path, (int)q->flags,
                               (int)q->at_flags);
    case SBX_FS_OP_READLINK:
      return sbx_broker_readlink(
          client, q->path, buffer_of(q),
          (size_t)(int)sbx_fs_request_arg(q, SBX_FS_ARG_SIZE));
    case SBX_FS_OP_MKDIR:
      return sbx_broker_mkdir(client, q->path, (mode_t)q->mode);
    case SBX_FS_OP_RMDIR:
      return sbx_broker_rmdir(client, q->path);
    case SBX_FS_OP_UNLINK:
      return sbx_broker_unlink(client, q->path);
    case SBX_FS_OP_RENAME:
      return sbx_broker_rename(client, q->path, q->path2, q->flags);
    default:
      /* The table marks no other operation SBX_FS_LAYER1. */
      return -ENOSYS;
  }
}

/* Async-signal-safe. The kernel's answer for a path written as a
 * directory (sbx_fs_directory_form), path normalised already: 0 to go
 * on with the call, else -errno. The look is the broker's stat; when the
 * broker refuses it, the call itself gets the broker's answer. */
static intptr_t directory_form(const sbx_broker_client *client, char *path,
                               const sbx_fs_dir_form *form) {
  if (form->error)
    return -form->error;
  if (!form->look)
    return 0;
  /* The directory above is looked at in place: the path is cut at its
   * last '/' (kept for "/") and put back. */
  char *last = form->parent ? strrchr(path, '/') : NULL;
  char *cut = last ? (last == path ? last + 1 : last) : NULL;
  char saved = cut ? *cut : '\0';
  if (cut)
    *cut = '\0';
  struct stat st;
  int rc = form->follow ? sbx_broker_stat(client, path, &st)
                        : sbx_broker_lstat(client, path, &st);
  if (cut)
    *cut = saved;
  if (rc < 0)
    return 0;
  int err = S_ISDIR(st.st_mode) ? form->if_dir : form->if_not_dir;
  return err ? -err : 0;
}

/* Async-signal-safe. Decodes into the buffers given, applies layer 1's
 * rules and asks the broker. */
static intptr_t serve(const sbx_fs_call *row, const sbx_trap_call *call,
                      const sbx_broker_client *client, char *path,
                      char *path2) {
  sbx_fs_request q;
  int rc =
      sbx_fs_decode(row, call->args, &sbx_fs_local_reader, path, path2, &q);
  if (rc < 0)
    return rc;
  if (q.form != SBX_FS_FORM_PATH)
    return answer_descriptor(&q);
  sbx_fs_dir_form form;
  bool dir_form = sbx_fs_directory_form(&q, &form);
  rc = broker_path(q.path, &q.path_len);
  if (rc == 0 && q.path2)
    rc = broker_path(q.path2, &q.path2_len);
  if (rc == 0 && dir_form)
    rc = (int)directory_form(client, q.path, &form);
  if (rc < 0)
    return rc;
  int fd = open_directly(&q);
  if (fd >= 0)
    return fd;
  return send_to_broker(client, &q);
}

/* Async-signal-safe. The calls with two paths (rename) get a second
 * buffer; kept apart so that the other calls use one PATH_MAX buffer of
 * the stack they interrupted, not two. */
__attribute__((noinline)) static intptr_t serve_two_paths(
    const sbx_fs_call *row, const sbx_trap_call *call,
    const sbx_broker_client *client) {
  char path[PATH_MAX], path2[PATH_MAX];
  return serve(row, call, client, path, path2);
}

/* Async-signal-safe. */
__attribute__((noinline)) static intptr_t serve_one_path(
    const sbx_fs_call *row, const sbx_trap_call *call,
    const sbx_broker_client *client) {
  char path[PATH_MAX];
  return serve(row, call, client, path, NULL);
}

/* Async-signal-safe. The handler registered for every SBX_FS_LAYER1 row;
 * aux is the sbx_broker_client. */
static intptr_t layer1_trap(const sbx_trap_call *call, void *aux) {
  const sbx_fs_call *row = sbx_fs_call_find(call->nr);
  if (row == NULL || !(row->traits & SBX_FS_LAYER1))
    return -ENOSYS;
  if (sbx_fs_call_arg(row, SBX_FS_ARG_PATH2) >= 0)
    return serve_two_paths(row, call, aux);
  return serve_one_path(row, call, aux);
}

/* Async-signal-safe. Runs in the zygote, which may have been forked from
 * a process whose other threads held locks. The registry's functions
 * allocate nothing when given a NULL GError (as report.c relies on too),
 * and the numbers of the table are all in the registry's range, so the
 * only refusal left is a frozen registry. */
int sbx_layer1_register_traps_raw(void *client, const char *roots,
                                  size_t roots_len) {
  if (client == NULL)
    return -EINVAL;
  direct_roots = roots;
  direct_roots_len = roots ? roots_len : 0;
  for (size_t i = 0; i < sbx_fs_call_count(); i++) {
    const sbx_fs_call *row = sbx_fs_call_at(i);
    if (!(row->traits & SBX_FS_LAYER1))
      continue;
    if (sbx_trap_register_raw(row->nr, layer1_trap, client) < 0)
      return -EBUSY;
  }
  if (sbx_trap_install_raw() < 0)
    return -EINVAL;
  return 0;
}

/* Async-signal-safe. Runs in each worker between its filters and its entry. */
int sbx_layer1_send_listener_raw(void *client, int listener_fd) {
  if (client == NULL || listener_fd < 0)
    return -EINVAL;
  return sbx_broker_send_listener(client, listener_fd);
}

/* Async-signal-safe. Runs in each worker between fork and its entry. */
int sbx_layer1_attach_raw(void *client, int channel_fd) {
  if (client == NULL || channel_fd < 0)
    return -EINVAL;
  sbx_broker_client_init(client, channel_fd);
  return 0;
}
