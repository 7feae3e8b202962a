/* The table of file-system system calls; see fs_calls.h.
 *
 * Constant data and pure functions over it: trusts nothing, refuses
 * nothing by itself (the decoder applies the masks).
 */
#include "sandbox/files/fs_calls.h"

#include <errno.h>
#include <linux/falloc.h>
#include <sys/syscall.h>

#include "sandbox/base/strbuf.h"

/* Numbers newer than Debian 12's headers
 * (sandbox/base/syscalls_supplement.txt). */
#ifndef __NR_fchmodat2
#define __NR_fchmodat2 452
#endif
#ifndef __NR_setxattrat
#define __NR_setxattrat 463
#endif
#ifndef __NR_removexattrat
#define __NR_removexattrat 466
#endif
#ifndef __NR_file_setattr
#define __NR_file_setattr 469
#endif

/* execveat(2)'s check-only exec (Linux 6.14); older kernels refuse it
 * themselves. */
#define K_AT_EXECVE_CHECK 0x10000

/* Short role names for the table. */
enum {
  A_NONE = SBX_FS_ARG_NONE,
  A_DIRFD = SBX_FS_ARG_DIRFD,
  A_PATH = SBX_FS_ARG_PATH,
  A_DIRFD2 = SBX_FS_ARG_DIRFD2,
  A_PATH2 = SBX_FS_ARG_PATH2,
  A_FD = SBX_FS_ARG_FD,
  A_FLAGS = SBX_FS_ARG_FLAGS,
  A_MODE = SBX_FS_ARG_MODE,
  A_AT = SBX_FS_ARG_AT_FLAGS,
  A_HOW = SBX_FS_ARG_HOW,
  A_HOW_SIZE = SBX_FS_ARG_HOW_SIZE,
  A_MASK = SBX_FS_ARG_MASK,
  A_BUF = SBX_FS_ARG_BUF,
  A_SIZE = SBX_FS_ARG_SIZE,
  A_LENGTH = SBX_FS_ARG_LENGTH,
  A_OFFSET = SBX_FS_ARG_OFFSET,
  A_TIMES = SBX_FS_ARG_TIMES,
  A_NAME = SBX_FS_ARG_NAME,
  A_VALUE = SBX_FS_ARG_VALUE,
  A_OWNER = SBX_FS_ARG_OWNER,
  A_GROUP = SBX_FS_ARG_GROUP,
  A_DEV = SBX_FS_ARG_DEV,
  A_TARGET = SBX_FS_ARG_TARGET,
  A_ARGV = SBX_FS_ARG_ARGV,
  A_ENVP = SBX_FS_ARG_ENVP,
  A_OTHER = SBX_FS_ARG_OTHER,
};

#define CALL(c, o) .nr = __NR_##c, .name = #c, .op = SBX_FS_OP_##o
#define ARGS(...) .args = {__VA_ARGS__}
#define BOTH (SBX_FS_LAYER1 | SBX_FS_SUPERVISED)
#define SUPERVISED SBX_FS_SUPERVISED
#define STRICT SBX_FS_STRICT_FLAGS
#define NOFOLLOW .fixed_at_flags = AT_SYMLINK_NOFOLLOW

/* One row per call. Layer 1 serves the BOTH rows through the broker; the
 * others reach the broker-client layer as `return EPERM` (path forms) or
 * are left to layer 2 (descriptor forms). sbx-run's supervisor decides
 * every row. */
static const sbx_fs_call calls[] = {
    /* ---- opening ---- */
    {CALL(open, OPEN), ARGS(A_PATH, A_FLAGS, A_MODE),
     .flags_mask = SBX_FS_OPEN_FLAGS, .traits = BOTH},
    {CALL(openat, OPEN), ARGS(A_DIRFD, A_PATH, A_FLAGS, A_MODE),
     .flags_mask = SBX_FS_OPEN_FLAGS, .traits = BOTH},
    {CALL(creat, OPEN), ARGS(A_PATH, A_MODE), .flags_mask = SBX_FS_OPEN_FLAGS,
     .fixed_flags = O_CREAT | O_WRONLY | O_TRUNC, .traits = BOTH},
    /* Flags and mode come from struct open_how. */
    {CALL(openat2, OPEN), ARGS(A_DIRFD, A_PATH, A_HOW, A_HOW_SIZE),
     .flags_mask = SBX_FS_OPEN_FLAGS, .traits = SUPERVISED | STRICT},

    /* ---- looking ---- */
    {CALL(stat, STAT), ARGS(A_PATH, A_BUF), .traits = BOTH},
    {CALL(lstat, STAT), ARGS(A_PATH, A_BUF), NOFOLLOW, .traits = BOTH},
    {CALL(newfstatat, STAT), ARGS(A_DIRFD, A_PATH, A_BUF, A_AT),
     .at_flags_mask = SBX_FS_STAT_AT_FLAGS,
     .traits = BOTH | SBX_FS_NULL_PATH_EMPTY},
    {CALL(statx, STAT), ARGS(A_DIRFD, A_PATH, A_AT, A_MASK, A_BUF),
     .at_flags_mask = SBX_FS_STATX_AT_FLAGS,
     .traits = BOTH | SBX_FS_NULL_PATH_EMPTY},
    {CALL(access, ACCESS), ARGS(A_PATH, A_FLAGS),
     .flags_mask = SBX_FS_ACCESS_MODES, .traits = BOTH | STRICT},
    {CALL(faccessat, ACCESS), ARGS(A_DIRFD, A_PATH, A_FLAGS),
     .flags_mask = SBX_FS_ACCESS_MODES, .traits = BOTH | STRICT},
    {CALL(faccessat2, ACCESS), ARGS(A_DIRFD, A_PATH, A_FLAGS, A_AT),
     .flags_mask = SBX_FS_ACCESS_MODES, .at_flags_mask = SBX_FS_ACCESS_AT_FLAGS,
     .traits = BOTH | STRICT},
    {CALL(readlink, READLINK), ARGS(A_PATH, A_BUF, A_SIZE), .traits = BOTH},
    {CALL(readlinkat, READLINK), ARGS(A_DIRFD, A_PATH, A_BUF, A_SIZE),
     .traits = BOTH},
    {CALL(statfs, STATFS), ARGS(A_PATH, A_BUF), .traits = SUPERVISED},
    {CALL(getxattr, GETXATTR), ARGS(A_PATH, A_NAME, A_BUF, A_SIZE),
     .traits = SUPERVISED},
    {CALL(lgetxattr, GETXATTR), ARGS(A_PATH, A_NAME, A_BUF, A_SIZE), NOFOLLOW,
     .traits = SUPERVISED},
    {CALL(listxattr, LISTXATTR), ARGS(A_PATH, A_BUF, A_SIZE),
     .traits = SUPERVISED},
    {CALL(llistxattr, LISTXATTR), ARGS(A_PATH, A_BUF, A_SIZE), NOFOLLOW,
     .traits = SUPERVISED},
    {CALL(inotify_add_watch, WATCH), ARGS(A_OTHER, A_PATH, A_OTHER),
     .traits = SUPERVISED},
    {CALL(chdir, CHDIR), ARGS(A_PATH), .traits = SUPERVISED},

    /* ---- names in directories ---- */
    {CALL(mkdir, MKDIR), ARGS(A_PATH, A_MODE), .traits = BOTH},
    {CALL(mkdirat, MKDIR), ARGS(A_DIRFD, A_PATH, A_MODE), .traits = BOTH},
    {CALL(rmdir, RMDIR), ARGS(A_PATH), .traits = BOTH},
    {CALL(unlink, UNLINK), ARGS(A_PATH), .traits = BOTH},
    {CALL(unlinkat, UNLINK), ARGS(A_DIRFD, A_PATH, A_AT),
     .at_flags_mask = SBX_FS_UNLINK_AT_FLAGS, .alt_at_flag = AT_REMOVEDIR,
     .alt_op = SBX_FS_OP_RMDIR, .traits = BOTH},
    {CALL(rename, RENAME), ARGS(A_PATH, A_PATH2), .traits = BOTH},
    {CALL(renameat, RENAME), ARGS(A_DIRFD, A_PATH, A_DIRFD2, A_PATH2),
     .traits = BOTH},
    {CALL(renameat2, RENAME), ARGS(A_DIRFD, A_PATH, A_DIRFD2, A_PATH2, A_FLAGS),
     .flags_mask = SBX_FS_RENAME_FLAGS, .traits = BOTH | STRICT},
    {CALL(link, LINK), ARGS(A_PATH, A_PATH2), .traits = SUPERVISED},
    {CALL(linkat, LINK), ARGS(A_DIRFD, A_PATH, A_DIRFD2, A_PATH2, A_AT),
     .at_flags_mask = SBX_FS_LINK_AT_FLAGS, .traits = SUPERVISED},
    {CALL(symlink, SYMLINK), ARGS(A_TARGET, A_PATH), .traits = SUPERVISED},
    {CALL(symlinkat, SYMLINK), ARGS(A_TARGET, A_DIRFD, A_PATH),
     .traits = SUPERVISED},
    {CALL(mknod, MKNOD), ARGS(A_PATH, A_MODE, A_DEV), .traits = SUPERVISED},
    {CALL(mknodat, MKNOD), ARGS(A_DIRFD, A_PATH, A_MODE, A_DEV),
     .traits = SUPERVISED},

    /* ---- metadata, by path and by descriptor ---- */
    {CALL(chmod, CHMOD), ARGS(A_PATH, A_MODE), .traits = SUPERVISED},
    {CALL(fchmodat, CHMOD), ARGS(A_DIRFD, A_PATH, A_MODE),
     .traits = SUPERVISED},
    {CALL(fchmodat2, CHMOD), ARGS(A_DIRFD, A_PATH, A_MODE, A_AT),
     .at_flags_mask = SBX_FS_OBJECT_AT_FLAGS, .traits = SUPERVISED},
    {CALL(fchmod, CHMOD), ARGS(A_FD, A_MODE), .traits = SUPERVISED},
    {CALL(chown, CHOWN), ARGS(A_PATH, A_OWNER, A_GROUP), .traits = SUPERVISED},
    {CALL(lchown, CHOWN), ARGS(A_PATH, A_OWNER, A_GROUP), NOFOLLOW,
     .traits = SUPERVISED},
    {CALL(fchownat, CHOWN), ARGS(A_DIRFD, A_PATH, A_OWNER, A_GROUP, A_AT),
     .at_flags_mask = SBX_FS_OBJECT_AT_FLAGS, .traits = SUPERVISED},
    {CALL(fchown, CHOWN), ARGS(A_FD, A_OWNER, A_GROUP), .traits = SUPERVISED},
    {CALL(utime, UTIME), ARGS(A_PATH, A_TIMES),
     .traits = SUPERVISED | SBX_FS_LEGACY_TIMES},
    {CALL(utimes, UTIME), ARGS(A_PATH, A_TIMES),
     .traits = SUPERVISED | SBX_FS_LEGACY_TIMES},
    {CALL(futimesat, UTIME), ARGS(A_DIRFD, A_PATH, A_TIMES),
     .traits = SUPERVISED | SBX_FS_LEGACY_TIMES | SBX_FS_NULL_PATH_IS_FD},
    /* utimensat(fd, NULL, times, 0) is futimens(fd). */
    {CALL(utimensat, UTIME), ARGS(A_DIRFD, A_PATH, A_TIMES, A_AT),
     .at_flags_mask = SBX_FS_OBJECT_AT_FLAGS,
     .traits = SUPERVISED | SBX_FS_NULL_PATH_IS_FD},
    {CALL(truncate, TRUNCATE), ARGS(A_PATH, A_LENGTH), .traits = SUPERVISED},
    {CALL(ftruncate, TRUNCATE), ARGS(A_FD, A_LENGTH), .traits = SUPERVISED},
    /* The kernel answers unknown modes (EOPNOTSUPP) when it runs it. */
    {CALL(fallocate, FALLOCATE), ARGS(A_FD, A_FLAGS, A_OFFSET, A_LENGTH),
     .traits = SUPERVISED},
    {CALL(setxattr, SETXATTR), ARGS(A_PATH, A_NAME, A_VALUE, A_SIZE, A_FLAGS),
     .flags_mask = SBX_FS_XATTR_FLAGS, .traits = SUPERVISED | STRICT},
    {CALL(lsetxattr, SETXATTR), ARGS(A_PATH, A_NAME, A_VALUE, A_SIZE, A_FLAGS),
     .flags_mask = SBX_FS_XATTR_FLAGS, NOFOLLOW, .traits = SUPERVISED | STRICT},
    {CALL(fsetxattr, SETXATTR), ARGS(A_FD, A_NAME, A_VALUE, A_SIZE, A_FLAGS),
     .flags_mask = SBX_FS_XATTR_FLAGS, .traits = SUPERVISED | STRICT},
    /* Its flags and value are in a struct xattr_args. */
    {CALL(setxattrat, SETXATTR),
     ARGS(A_DIRFD, A_PATH, A_AT, A_NAME, A_OTHER, A_OTHER),
     .at_flags_mask = SBX_FS_OBJECT_AT_FLAGS, .traits = SUPERVISED},
    {CALL(removexattr, REMOVEXATTR), ARGS(A_PATH, A_NAME),
     .traits = SUPERVISED},
    {CALL(lremovexattr, REMOVEXATTR), ARGS(A_PATH, A_NAME), NOFOLLOW,
     .traits = SUPERVISED},
    {CALL(fremovexattr, REMOVEXATTR), ARGS(A_FD, A_NAME), .traits = SUPERVISED},
    {CALL(removexattrat, REMOVEXATTR), ARGS(A_DIRFD, A_PATH, A_AT, A_NAME),
     .at_flags_mask = SBX_FS_OBJECT_AT_FLAGS, .traits = SUPERVISED},
    {CALL(file_setattr, CHATTR), ARGS(A_DIRFD, A_PATH, A_OTHER, A_OTHER, A_AT),
     .at_flags_mask = SBX_FS_OBJECT_AT_FLAGS, .traits = SUPERVISED},

    /* ---- running programs ---- */
    {CALL(execve, EXEC), ARGS(A_PATH, A_ARGV, A_ENVP), .traits = SUPERVISED},
    {CALL(execveat, EXEC), ARGS(A_DIRFD, A_PATH, A_ARGV, A_ENVP, A_AT),
     .at_flags_mask = SBX_FS_OBJECT_AT_FLAGS | K_AT_EXECVE_CHECK,
     .traits = SUPERVISED},
};

#define N_CALLS (sizeof(calls) / sizeof(calls[0]))

/* Async-signal-safe. */
const sbx_fs_call *sbx_fs_call_find(int nr) {
  for (size_t i = 0; i < N_CALLS; i++)
    if (calls[i].nr == nr)
      return &calls[i];
  return NULL;
}

/* Async-signal-safe. */
size_t sbx_fs_call_count(void) {
  return N_CALLS;
}

/* Async-signal-safe. */
const sbx_fs_call *sbx_fs_call_at(size_t i) {
  return i < N_CALLS ? &calls[i] : NULL;
}

/* Async-signal-safe. */
int sbx_fs_call_arg(const sbx_fs_call *call, sbx_fs_arg_role role) {
  for (int i = 0; i < 6; i++)
    if (call->args[i] == role)
      return i;
  return -1;
}

/* Async-signal-safe. */
int sbx_fs_check_statx(uint32_t at_flags, uint32_t mask) {
  if ((at_flags & AT_STATX_SYNC_TYPE) == AT_STATX_SYNC_TYPE)
    return -EINVAL;
  if (mask & STATX__RESERVED)
    return -EINVAL;
  return 0;
}

/* Async-signal-safe. */
int sbx_fs_check_rename(uint32_t flags) {
  if ((flags & RENAME_EXCHANGE) &&
      (flags & (RENAME_NOREPLACE | RENAME_WHITEOUT)))
    return -EINVAL;
  return 0;
}

/* ---- operations: names, needs and how their flags read ------------------ */

typedef enum {
  SHOWS_NOTHING,
  SHOWS_OPEN_FLAGS,
  SHOWS_ACCESS_MODE,
  SHOWS_AT_FLAGS,
  SHOWS_MODE,
  SHOWS_RENAME_FLAGS,
  SHOWS_FALLOC_MODE,
  SHOWS_XATTR_FLAGS,
} shows;

typedef struct {
  const char *name;
  sbx_fs_need need;
  shows flags;
} op_info;

static const op_info ops[SBX_FS_OP_COUNT] = {
    [SBX_FS_OP_OPEN] = {"open", SBX_FS_NEEDS_BY_FLAGS, SHOWS_OPEN_FLAGS},
    [SBX_FS_OP_STAT] = {"stat", SBX_FS_NEEDS_LOOK, SHOWS_AT_FLAGS},
    [SBX_FS_OP_ACCESS] = {"access", SBX_FS_NEEDS_LOOK, SHOWS_ACCESS_MODE},
    [SBX_FS_OP_READLINK] = {"readlink", SBX_FS_NEEDS_LOOK, SHOWS_NOTHING},
    [SBX_FS_OP_MKDIR] = {"mkdir", SBX_FS_NEEDS_CREATE, SHOWS_MODE},
    [SBX_FS_OP_RMDIR] = {"rmdir", SBX_FS_NEEDS_CREATE, SHOWS_NOTHING},
    [SBX_FS_OP_UNLINK] = {"unlink", SBX_FS_NEEDS_CREATE, SHOWS_NOTHING},
    [SBX_FS_OP_RENAME] = {"rename", SBX_FS_NEEDS_CREATE, SHOWS_RENAME_FLAGS},
    [SBX_FS_OP_CHMOD] = {"chmod", SBX_FS_NEEDS_WRITE, SHOWS_MODE},
    [SBX_FS_OP_CHOWN] = {"chown", SBX_FS_NEEDS_WRITE, SHOWS_AT_FLAGS},
    [SBX_FS_OP_UTIME] = {"utime", SBX_FS_NEEDS_WRITE, SHOWS_AT_FLAGS},
    [SBX_FS_OP_TRUNCATE] = {"truncate", SBX_FS_NEEDS_WRITE, SHOWS_NOTHING},
    [SBX_FS_OP_FALLOCATE] = {"fallocate", SBX_FS_NEEDS_WRITE,
                             SHOWS_FALLOC_MODE},
    [SBX_FS_OP_STATFS] = {"statfs", SBX_FS_NEEDS_READ, SHOWS_NOTHING},
    [SBX_FS_OP_GETXATTR] = {"getxattr", SBX_FS_NEEDS_READ, SHOWS_AT_FLAGS},
    [SBX_FS_OP_LISTXATTR] = {"listxattr", SBX_FS_NEEDS_READ, SHOWS_AT_FLAGS},
    [SBX_FS_OP_SETXATTR] = {"setxattr", SBX_FS_NEEDS_WRITE, SHOWS_XATTR_FLAGS},
    [SBX_FS_OP_REMOVEXATTR] = {"removexattr", SBX_FS_NEEDS_WRITE,
                               SHOWS_AT_FLAGS},
    [SBX_FS_OP_CHATTR] = {"chattr", SBX_FS_NEEDS_WRITE, SHOWS_AT_FLAGS},
    [SBX_FS_OP_LINK] = {"link", SBX_FS_NEEDS_CREATE, SHOWS_AT_FLAGS},
    [SBX_FS_OP_SYMLINK] = {"symlink", SBX_FS_NEEDS_CREATE, SHOWS_NOTHING},
    [SBX_FS_OP_MKNOD] = {"mknod", SBX_FS_NEEDS_CREATE, SHOWS_MODE},
    [SBX_FS_OP_WATCH] = {"watch", SBX_FS_NEEDS_READ, SHOWS_NOTHING},
    [SBX_FS_OP_CHDIR] = {"chdir", SBX_FS_NEEDS_LOOK, SHOWS_NOTHING},
    [SBX_FS_OP_EXEC] = {"exec", SBX_FS_NEEDS_EXEC, SHOWS_AT_FLAGS},
};

/* Async-signal-safe. */
static const op_info *op_of(sbx_fs_op op) {
  if ((unsigned)op >= SBX_FS_OP_COUNT || ops[op].name == NULL)
    return NULL;
  return &ops[op];
}

/* Async-signal-safe. */
const char *sbx_fs_op_name(sbx_fs_op op) {
  const op_info *o = op_of(op);
  return o ? o->name : NULL;
}

/* Async-signal-safe. */
sbx_fs_need sbx_fs_op_need(sbx_fs_op op) {
  const op_info *o = op_of(op);
  return o ? o->need : SBX_FS_NEEDS_LOOK;
}

/* Async-signal-safe. */
sbx_fs_need sbx_fs_open_need(uint32_t flags) {
  if (flags & (O_CREAT | SBX_FS_O_TMPFILE_BIT))
    return SBX_FS_NEEDS_CREATE;
  if ((flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC))
    return SBX_FS_NEEDS_WRITE;
  return SBX_FS_NEEDS_READ;
}

/* Async-signal-safe. */
uint32_t sbx_fs_op_shown_flags(sbx_fs_op op, uint32_t flags, uint32_t mode,
                               uint32_t at_flags) {
  const op_info *o = op_of(op);
  switch (o ? o->flags : SHOWS_NOTHING) {
    case SHOWS_OPEN_FLAGS:
    case SHOWS_ACCESS_MODE:
    case SHOWS_RENAME_FLAGS:
    case SHOWS_FALLOC_MODE:
    case SHOWS_XATTR_FLAGS:
      return flags;
    case SHOWS_MODE:
      return mode;
    case SHOWS_AT_FLAGS:
      return at_flags;
    case SHOWS_NOTHING:
      break;
  }
  return 0;
}

/* ---- flags as text ------------------------------------------------------ */

typedef struct {
  uint32_t bit;
  const char *name;
} flag_name;

static const flag_name open_names[] = {
    {O_CREAT, "O_CREAT"},
    {O_EXCL, "O_EXCL"},
    {O_NOCTTY, "O_NOCTTY"},
    {O_TRUNC, "O_TRUNC"},
    {O_APPEND, "O_APPEND"},
    {O_NONBLOCK, "O_NONBLOCK"},
    {O_DSYNC, "O_DSYNC"},
    {SBX_FS_O_SYNC_BIT, "__O_SYNC"},
    {O_DIRECT, "O_DIRECT"},
    {SBX_FS_O_LARGEFILE, "O_LARGEFILE"},
    {O_DIRECTORY, "O_DIRECTORY"},
    {O_NOFOLLOW, "O_NOFOLLOW"},
    {O_NOATIME, "O_NOATIME"},
    {O_CLOEXEC, "O_CLOEXEC"},
    {SBX_FS_O_TMPFILE_BIT, "__O_TMPFILE"},
    {SBX_FS_O_PATH, "O_PATH"},
    {SBX_FS_O_ASYNC, "O_ASYNC"},
    {0, NULL},
};

static const flag_name access_names[] = {
    {R_OK, "R_OK"},
    {W_OK, "W_OK"},
    {X_OK, "X_OK"},
    {0, NULL},
};

static const flag_name at_names[] = {
    {AT_SYMLINK_NOFOLLOW, "AT_SYMLINK_NOFOLLOW"},
    {AT_SYMLINK_FOLLOW, "AT_SYMLINK_FOLLOW"},
    {AT_NO_AUTOMOUNT, "AT_NO_AUTOMOUNT"},
    {AT_EMPTY_PATH, "AT_EMPTY_PATH"},
    {AT_STATX_FORCE_SYNC, "AT_STATX_FORCE_SYNC"},
    {AT_STATX_DONT_SYNC, "AT_STATX_DONT_SYNC"},
    {K_AT_EXECVE_CHECK, "AT_EXECVE_CHECK"},
    {0, NULL},
};

static const flag_name rename_names[] = {
    {RENAME_NOREPLACE, "RENAME_NOREPLACE"},
    {RENAME_EXCHANGE, "RENAME_EXCHANGE"},
    {RENAME_WHITEOUT, "RENAME_WHITEOUT"},
    {0, NULL},
};

static const flag_name falloc_names[] = {
    {FALLOC_FL_KEEP_SIZE, "FALLOC_FL_KEEP_SIZE"},
    {FALLOC_FL_PUNCH_HOLE, "FALLOC_FL_PUNCH_HOLE"},
    {FALLOC_FL_COLLAPSE_RANGE, "FALLOC_FL_COLLAPSE_RANGE"},
    {FALLOC_FL_ZERO_RANGE, "FALLOC_FL_ZERO_RANGE"},
    {FALLOC_FL_INSERT_RANGE, "FALLOC_FL_INSERT_RANGE"},
    {FALLOC_FL_UNSHARE_RANGE, "FALLOC_FL_UNSHARE_RANGE"},
    {0, NULL},
};

static const flag_name xattr_names[] = {
    {1, "XATTR_CREATE"},
    {2, "XATTR_REPLACE"},
    {0, NULL},
};

/* Async-signal-safe. Names of the bits set, '|' between them, the rest
 * in hex; `first` says whether nothing was written yet. */
static void add_names(sbx_strbuf *sb, uint32_t flags, const flag_name *names,
                      bool first) {
  for (const flag_name *n = names; n->name; n++) {
    if (!(flags & n->bit))
      continue;
    if (!first)
      sbx_strbuf_add_char(sb, '|');
    sbx_strbuf_add(sb, n->name);
    flags &= ~n->bit;
    first = false;
  }
  if (flags) {
    if (!first)
      sbx_strbuf_add_char(sb, '|');
    sbx_strbuf_add_hex(sb, flags);
  } else if (first) {
    sbx_strbuf_add_char(sb, '0');
  }
}

/* Async-signal-safe. */
static void add_octal(sbx_strbuf *sb, uint32_t v) {
  char tmp[12];
  int n = 0;
  do {
    tmp[n++] = (char)('0' + (v & 7));
    v >>= 3;
  } while (v);
  sbx_strbuf_add_char(sb, '0');
  while (n > 0)
    sbx_strbuf_add_char(sb, tmp[--n]);
}

/* Async-signal-safe. */
size_t sbx_fs_format_flags(sbx_fs_op op, uint32_t flags, char *buf,
                           size_t size) {
  static const char *const acc[] = {"O_RDONLY", "O_WRONLY", "O_RDWR",
                                    "O_ACCMODE"};
  sbx_strbuf sb;
  sbx_strbuf_init(&sb, buf, size);
  const op_info *o = op_of(op);
  switch (o ? o->flags : SHOWS_NOTHING) {
    case SHOWS_OPEN_FLAGS:
      sbx_strbuf_add(&sb, acc[flags & O_ACCMODE]);
      add_names(&sb, flags & ~(uint32_t)O_ACCMODE, open_names, false);
      break;
    case SHOWS_ACCESS_MODE:
      if (flags == F_OK)
        sbx_strbuf_add(&sb, "F_OK");
      else
        add_names(&sb, flags, access_names, true);
      break;
    case SHOWS_AT_FLAGS:
      add_names(&sb, flags, at_names, true);
      break;
    case SHOWS_MODE:
      add_octal(&sb, flags);
      break;
    case SHOWS_RENAME_FLAGS:
      add_names(&sb, flags, rename_names, true);
      break;
    case SHOWS_FALLOC_MODE:
      add_names(&sb, flags, falloc_names, true);
      break;
    case SHOWS_XATTR_FLAGS:
      add_names(&sb, flags, xattr_names, true);
      break;
    case SHOWS_NOTHING:
      if (flags)
        sbx_strbuf_add_hex(&sb, flags);
      else
        sbx_strbuf_add_char(&sb, '0');
      break;
  }
  return sbx_strbuf_finish(&sb);
}
