/* The decoder of file-system system calls: six registers and the call's
 * row of the table (fs_calls.h) become one request, or the errno the
 * kernel gives for those arguments.
 *
 * Why it exists: layer 1's SIGSYS handler and sbx-run's supervisor both
 * turn a trapped call into a file operation. They differ in how they read
 * the caller's memory (layer 1 reads its own process; the supervisor reads
 * another one's through /proc/TID/mem, checking after every read that the
 * call is still pending) and in what they do with the request, not in
 * which argument is the path or which flags are valid. One decoder means
 * one answer to malformed arguments, and a check that cannot be present in
 * one executor and missing in the other.
 *
 * What it does, in the kernel's order: reads the flags (refusing unknown
 * ones with EINVAL where the kernel does, and the rules beyond masks:
 * statx's sync types and reserved mask bits, rename's exclusive flags,
 * readlink's buffer size, openat2's struct open_how), then copies each
 * path into a buffer of the caller's (EFAULT for NULL or unreadable
 * memory, ENAMETOOLONG without a NUL in PATH_MAX bytes, ENOENT for "" when
 * AT_EMPTY_PATH does not make it the descriptor form).
 *
 * What it trusts: the reader it is given. What it does not do: make a
 * path absolute or normalise it, decide anything, or touch the file
 * system; the executors do that with the copies it made, never with the
 * caller's memory again.
 *
 * Async-signal-safe and allocation-free (as safe as the reader passed).
 */
#ifndef SBX_FILES_FS_DECODE_H_
#define SBX_FILES_FS_DECODE_H_

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sandbox/files/fs_calls.h"

/* A reader's answer when the caller went away while it read (the
 * supervisor's target was killed or its call interrupted): nothing is to
 * be answered. */
#define SBX_FS_GONE (-200000)

/* How the decoder reads the caller's memory. */
typedef struct {
  /* Copies the NUL-terminated string at addr, NUL included, into buf
   * (size bytes). Returns its length, -EFAULT (NULL or unreadable),
   * -ENAMETOOLONG (no NUL in size bytes) or SBX_FS_GONE. */
  ssize_t (*read_string)(void *ctx, uint64_t addr, char *buf, size_t size);
  /* Copies exactly len bytes: 0, -EFAULT or SBX_FS_GONE. */
  int (*read)(void *ctx, uint64_t addr, void *buf, size_t len);
  void *ctx;
} sbx_fs_reader;

/* Reads the calling process's own memory (layer 1). NULL is -EFAULT; any
 * other invalid pointer faults in the reader, as it would in the caller's
 * own code. Async-signal-safe. */
extern const sbx_fs_reader sbx_fs_local_reader;

/* How the call names its object. */
typedef enum {
  SBX_FS_FORM_PATH,       /* a path, relative to dirfd */
  SBX_FS_FORM_EMPTY_PATH, /* "" with AT_EMPTY_PATH: the object dirfd names */
  SBX_FS_FORM_FD,         /* a descriptor form (fchmod, utimensat(fd, NULL)) */
} sbx_fs_form;

/* One decoded call. The broker protocol's request is built from op, path,
 * path2, flags, mode, at_flags and mask (layer 1); everything else is
 * reached through args by role. */
typedef struct {
  const sbx_fs_call *call;
  sbx_fs_op op; /* the row's, or its alt_op (unlinkat AT_REMOVEDIR) */
  sbx_fs_form form;
  int dirfd; /* AT_FDCWD when the call has none */
  int dirfd2;
  int fd;     /* the object's descriptor in the fd forms, else -1 */
  char *path; /* the caller's buffer, NUL-terminated; NULL when the
                 call names no path (the fd forms) */
  size_t path_len;
  char *path2;
  size_t path2_len;
  uint32_t flags;    /* FLAGS (or the row's fixed flags, or open_how's) */
  uint32_t mode;     /* MODE (or open_how's) */
  uint32_t at_flags; /* AT_FLAGS and the row's fixed ones; AT_EMPTY_PATH
                        is never left in: the form says it */
  uint32_t mask;     /* statx's */
  uint64_t resolve;  /* openat2's RESOLVE_ flags */
  uint64_t args[6];  /* the registers as the call passed them */
} sbx_fs_request;

/* Decodes one call of row `call` (sbx_fs_call_find) with arguments args.
 * path and path2 are the caller's buffers of PATH_MAX bytes (path2 may be
 * NULL for calls without a second path). Returns 0, -errno (the kernel's
 * answer to these arguments) or SBX_FS_GONE. On failure *out still holds
 * the call, op and the flag fields read so far, for the record.
 * Async-signal-safe when the reader is. */
int sbx_fs_decode(const sbx_fs_call *call, const uint64_t args[6],
                  const sbx_fs_reader *reader, char *path, char *path2,
                  sbx_fs_request *out);

/* The argument with that role as passed, or 0 when the call has none.
 * Async-signal-safe. */
uint64_t sbx_fs_request_arg(const sbx_fs_request *q, sbx_fs_arg_role role);

/* The flags a record of this request shows (sbx_fs_op_shown_flags), to
 * be printed with sbx_fs_format_flags(q->op, ...). Async-signal-safe. */
uint32_t sbx_fs_request_flags(const sbx_fs_request *q);

/* Lexically normalises an absolute path in place: empty and `.`
 * components vanish, `..` removes one component (never climbing above
 * `/`), a trailing `/` goes. The result is never longer than the input.
 * Returns the new length. Async-signal-safe. */
size_t sbx_fs_normalize_absolute(char *path, size_t len);

/* A path written as a directory: "name/", "name/." or "name/..". The
 * kernel then follows a final symbolic link and requires a directory
 * (path_resolution(7)); a normalised path has lost both, so the
 * executors check what the kernel would answer before they decide on
 * the plain name. */
typedef struct {
  int error; /* > 0: the kernel's answer, whatever the name reaches */
  bool look; /* else, when set: stat the name (followed or not), or
                with parent the directory above it, and answer: */
  bool follow;
  bool parent;
  int if_dir;     /* when what was looked at is a directory (0: go on) */
  int if_not_dir; /* when it is not (0: go on) */
} sbx_fs_dir_form;

/* Whether q's path is written as a directory; then fills form and reads
 * q as the kernel reads such a name: the no-follow flags are cleared and
 * an open that creates nothing gets O_DIRECTORY. Calls that make the
 * name (mkdir, symlink, link, mknod) are left to their executor. Call
 * before the path is normalised. Async-signal-safe. */
bool sbx_fs_directory_form(sbx_fs_request *q, sbx_fs_dir_form *form);

#endif /* SBX_FILES_FS_DECODE_H_ */
