/* The table of file-system system calls: for every call that names a file
 * or changes one through a descriptor, the operation it performs, the role
 * of each of its six arguments, the flags it accepts and which executor
 * decides it.
 *
 * Why it exists: turning a trapped call into a file operation is one job
 * done by two executors, layer 1's SIGSYS handlers (the broker's client)
 * and sbx-run's user-notification supervisor. When each kept its own list
 * of calls, argument positions and valid flags, a check made in one entry
 * point could be missing in another (a path form checked, its descriptor
 * form not). Here every call is one row, descriptor forms included, and
 * every flag set is defined once: the decoder (fs_decode.h), both
 * executors, the broker's command checks and the resolver read these
 * definitions, and a test runs the built-in policies over every row.
 *
 * What it trusts: nothing at run time; it is constant data. What it
 * refuses: flags outside a call's accepted set, where the kernel refuses
 * them too (the decoder applies this).
 *
 * Everything here is async-signal-safe and allocates nothing.
 */
#ifndef SBX_FILES_FS_CALLS_H_
#define SBX_FILES_FS_CALLS_H_

#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

/* What a call does to the file system. The names (sbx_fs_op_name) are the
 * vocabulary of every record of a decision: the broker's audit lines and
 * sbx-run's denial lines and audit file. */
typedef enum {
  SBX_FS_OP_NONE = 0, /* not a file operation (sockets, other calls) */
  SBX_FS_OP_OPEN,
  SBX_FS_OP_STAT,
  SBX_FS_OP_ACCESS,
  SBX_FS_OP_READLINK,
  SBX_FS_OP_MKDIR,
  SBX_FS_OP_RMDIR,
  SBX_FS_OP_UNLINK,
  SBX_FS_OP_RENAME,
  SBX_FS_OP_CHMOD,
  SBX_FS_OP_CHOWN,
  SBX_FS_OP_UTIME,
  SBX_FS_OP_TRUNCATE,
  SBX_FS_OP_FALLOCATE,
  SBX_FS_OP_STATFS,
  SBX_FS_OP_GETXATTR,
  SBX_FS_OP_LISTXATTR,
  SBX_FS_OP_SETXATTR,
  SBX_FS_OP_REMOVEXATTR,
  SBX_FS_OP_CHATTR, /* inode flags (file_setattr, FS_IOC_SETFLAGS) */
  SBX_FS_OP_LINK,
  SBX_FS_OP_SYMLINK,
  SBX_FS_OP_MKNOD,
  SBX_FS_OP_WATCH, /* inotify_add_watch */
  SBX_FS_OP_CHDIR,
  SBX_FS_OP_EXEC,
  SBX_FS_OP_COUNT,
} sbx_fs_op;

/* The role of one argument. */
typedef enum {
  SBX_FS_ARG_NONE = 0, /* not used by the call */
  SBX_FS_ARG_DIRFD,    /* directory a relative PATH starts from */
  SBX_FS_ARG_PATH,
  SBX_FS_ARG_DIRFD2, /* directory a relative PATH2 starts from */
  SBX_FS_ARG_PATH2,  /* rename's and link's second path */
  SBX_FS_ARG_FD,     /* the descriptor a descriptor form acts on */
  SBX_FS_ARG_FLAGS,  /* open flags, access mode, rename, fallocate or
                        setxattr flags */
  SBX_FS_ARG_MODE,   /* a create or chmod mode */
  SBX_FS_ARG_AT_FLAGS,
  SBX_FS_ARG_HOW,      /* openat2: struct open_how in memory */
  SBX_FS_ARG_HOW_SIZE, /* and its size */
  SBX_FS_ARG_MASK,     /* statx: the fields asked for */
  SBX_FS_ARG_BUF,      /* where the result goes (stat, link target, ...) */
  SBX_FS_ARG_SIZE,     /* the size of BUF */
  SBX_FS_ARG_LENGTH,   /* truncate's and fallocate's length */
  SBX_FS_ARG_OFFSET,   /* fallocate's offset */
  SBX_FS_ARG_TIMES,    /* utime*'s times in memory (NULL: now) */
  SBX_FS_ARG_NAME,     /* an extended attribute's name in memory */
  SBX_FS_ARG_VALUE,    /* an extended attribute's value in memory */
  SBX_FS_ARG_OWNER,    /* uid */
  SBX_FS_ARG_GROUP,    /* gid */
  SBX_FS_ARG_DEV,      /* mknod's device number */
  SBX_FS_ARG_TARGET,   /* symlink's contents: a string, never resolved */
  SBX_FS_ARG_ARGV,
  SBX_FS_ARG_ENVP,
  SBX_FS_ARG_OTHER, /* anything else (inotify descriptor and mask, ...) */
  SBX_FS_ARG_COUNT,
} sbx_fs_arg_role;

/* Who decides a call (sbx_fs_call.traits). */
enum {
  /* Layer 1 traps it and the broker serves it (broker-client.policy and
   * common.policy say `trap`). */
  SBX_FS_LAYER1 = 1u << 0,
  /* sbx-run's supervisor decides it (sbx-run.policy says
   * `user-notify`). */
  SBX_FS_SUPERVISED = 1u << 1,
  /* The kernel refuses FLAGS bits outside flags_mask with EINVAL (open(2)
   * and openat(2) ignore unknown bits; openat2(2) refuses them). AT_FLAGS
   * outside at_flags_mask are refused by every call that takes them. */
  SBX_FS_STRICT_FLAGS = 1u << 2,
  /* A NULL PATH with a real DIRFD is the descriptor form (utimensat(fd,
   * NULL, ...) is futimens(fd)). */
  SBX_FS_NULL_PATH_IS_FD = 1u << 3,
  /* A NULL PATH with AT_EMPTY_PATH means "" (fstatat and statx, Linux
   * 6.11). */
  SBX_FS_NULL_PATH_EMPTY = 1u << 4,
  /* utime, utimes, futimesat: times as struct utimbuf / timeval. */
  SBX_FS_LEGACY_TIMES = 1u << 5,
};

typedef struct {
  int nr;
  const char *name;
  sbx_fs_op op;
  uint8_t args[6];        /* sbx_fs_arg_role of each argument */
  uint32_t flags_mask;    /* bits FLAGS may carry */
  uint32_t at_flags_mask; /* bits AT_FLAGS may carry */
  /* Flags the call implies without an argument: creat's open flags,
   * lstat's AT_SYMLINK_NOFOLLOW. */
  uint32_t fixed_flags;
  uint32_t fixed_at_flags;
  /* unlinkat: with this AT_ flag the operation is alt_op instead. */
  uint32_t alt_at_flag;
  sbx_fs_op alt_op;
  unsigned traits; /* SBX_FS_* above */
} sbx_fs_call;

/* ---- The flag sets, each defined once ------------------------------------
 * Spelled with the kernel's values where glibc's headers hide or rename a
 * bit (O_LARGEFILE is 0 in userspace on x86-64; O_SYNC, O_TMPFILE and
 * O_PATH include other bits). */
#define SBX_FS_O_LARGEFILE 0100000
#define SBX_FS_O_SYNC_BIT 04000000     /* __O_SYNC */
#define SBX_FS_O_TMPFILE_BIT 020000000 /* __O_TMPFILE */
#define SBX_FS_O_PATH 010000000
#define SBX_FS_O_ASYNC 020000 /* FASYNC */

/* Every open flag the kernel knows (its VALID_OPEN_FLAGS). The broker
 * refuses bits outside it with EINVAL (open(2) itself would ignore them)
 * and decides on the rest (O_PATH, O_ASYNC refused). */
#define SBX_FS_OPEN_FLAGS                                                      \
  (O_ACCMODE | O_CREAT | O_EXCL | O_NOCTTY | O_TRUNC | O_APPEND | O_NONBLOCK | \
   O_DSYNC | SBX_FS_O_SYNC_BIT | O_DIRECT | SBX_FS_O_LARGEFILE | O_DIRECTORY | \
   O_NOFOLLOW | O_NOATIME | O_CLOEXEC | SBX_FS_O_TMPFILE_BIT | SBX_FS_O_PATH | \
   SBX_FS_O_ASYNC)

/* access(2)'s mode: F_OK (0) or these bits. */
#define SBX_FS_ACCESS_MODES (R_OK | W_OK | X_OK)
/* faccessat2(2). */
#define SBX_FS_ACCESS_AT_FLAGS \
  (AT_EACCESS | AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH)
/* newfstatat(2). */
#define SBX_FS_STAT_AT_FLAGS \
  (AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH | AT_NO_AUTOMOUNT)
/* statx(2); see also sbx_fs_check_statx. */
#define SBX_FS_STATX_AT_FLAGS (SBX_FS_STAT_AT_FLAGS | AT_STATX_SYNC_TYPE)
/* unlinkat(2). */
#define SBX_FS_UNLINK_AT_FLAGS AT_REMOVEDIR
/* renameat2(2); see also sbx_fs_check_rename. */
#define SBX_FS_RENAME_FLAGS \
  (RENAME_NOREPLACE | RENAME_EXCHANGE | RENAME_WHITEOUT)
/* fchmodat2, fchownat, utimensat, execveat, file_setattr and the *xattrat
 * calls. */
#define SBX_FS_OBJECT_AT_FLAGS (AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH)
/* linkat(2). */
#define SBX_FS_LINK_AT_FLAGS (AT_SYMLINK_FOLLOW | AT_EMPTY_PATH)
/* setxattr(2). */
#define SBX_FS_XATTR_FLAGS 3u /* XATTR_CREATE | XATTR_REPLACE */

/* What a decoded request carries to the broker (it never carries
 * AT_EMPTY_PATH: the decoder turns that into the request's form). */
#define SBX_FS_PATH_AT_FLAGS(set) ((set) & ~AT_EMPTY_PATH)
/* The rename flags the broker performs (no whiteouts: they need
 * CAP_MKNOD and make a device node). */
#define SBX_FS_RENAME_SERVED (RENAME_NOREPLACE | RENAME_EXCHANGE)

/* The rules beyond a mask, as the kernel applies them: 0 or -EINVAL.
 * statx: not both sync types, no reserved mask bit. rename:
 * RENAME_EXCHANGE never with RENAME_NOREPLACE or RENAME_WHITEOUT.
 * Async-signal-safe. */
int sbx_fs_check_statx(uint32_t at_flags, uint32_t mask);
int sbx_fs_check_rename(uint32_t flags);

/* ---- Looking calls up ---------------------------------------------------- */

/* The row for syscall nr, or NULL. Async-signal-safe. */
const sbx_fs_call *sbx_fs_call_find(int nr);

/* Every row, for checks and tests. Async-signal-safe. */
size_t sbx_fs_call_count(void);
const sbx_fs_call *sbx_fs_call_at(size_t i);

/* The index of the argument with that role, or -1. Async-signal-safe. */
int sbx_fs_call_arg(const sbx_fs_call *call, sbx_fs_arg_role role);

/* The operation's name ("open", "stat", ...), NULL for SBX_FS_OP_NONE
 * and unknown values. Async-signal-safe. */
const char *sbx_fs_op_name(sbx_fs_op op);

/* What an operation needs of the file it names, for whoever explains or
 * learns decisions. */
typedef enum {
  SBX_FS_NEEDS_LOOK,   /* stat-like: the name and its metadata */
  SBX_FS_NEEDS_READ,   /* the contents */
  SBX_FS_NEEDS_WRITE,  /* contents or metadata change */
  SBX_FS_NEEDS_CREATE, /* a name appears or goes in its directory */
  SBX_FS_NEEDS_EXEC,
  SBX_FS_NEEDS_BY_FLAGS, /* open: read, write or create, by its flags */
} sbx_fs_need;
/* Async-signal-safe. */
sbx_fs_need sbx_fs_op_need(sbx_fs_op op);
/* open's need by its flags (READ, WRITE or CREATE). Async-signal-safe. */
sbx_fs_need sbx_fs_open_need(uint32_t flags);

/* Which of a call's values the records of its operation show as its
 * flags: the FLAGS argument (open flags, access mode, rename, fallocate
 * and setxattr flags), the MODE (mkdir, chmod, mknod), the AT_ flags
 * (stat, chown, utime, exec, ...), or 0 (nothing to show).
 * Async-signal-safe. */
uint32_t sbx_fs_op_shown_flags(sbx_fs_op op, uint32_t flags, uint32_t mode,
                               uint32_t at_flags);

/* Writes the flags an operation was asked with (sbx_fs_op_shown_flags:
 * open flags, access mode, AT_ flags, mode, ...) as every record spells
 * them: names joined by '|' (`O_RDONLY|O_CLOEXEC`, `R_OK|W_OK`,
 * `AT_SYMLINK_NOFOLLOW`), a mode in octal (`0755`), `0` for none, unknown
 * bits in hex; other operations (SBX_FS_OP_NONE) in hex. Returns the
 * length the whole text needs; buf holds at most size - 1 bytes and a NUL.
 * Async-signal-safe. */
size_t sbx_fs_format_flags(sbx_fs_op op, uint32_t flags, char *buf,
                           size_t size);

/* Room for any sbx_fs_format_flags text. */
#define SBX_FS_FLAGS_TEXT_MAX 256

#endif /* SBX_FILES_FS_CALLS_H_ */
