/* The command table: what a worker may ask, and the field rules of each
 * command; see commands.h. The table and its lookups run in a worker's
 * SIGSYS handler (the client's pre-check) as well as in the broker, so
 * they are async-signal-safe; the handlers are commands.c.
 *
 * Trusts nothing: every lookup checks the command number first.
 */
#include "sandbox/broker/commands.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

/* The field rules: the flag sets of the table of file-system calls, as a
 * decoded request carries them (never AT_EMPTY_PATH), narrowed to what
 * the broker serves. */
static int check_none(uint32_t flags, uint32_t arg) {
  return flags == 0 && arg == 0 ? 0 : -EINVAL;
}

static int check_open(uint32_t flags, uint32_t arg) {
  return arg <= 07777 ? 0 : -EINVAL;
}

static int check_access(uint32_t flags, uint32_t arg) {
  if (flags & ~(uint32_t)SBX_FS_ACCESS_MODES)
    return -EINVAL;
  if (arg & ~(uint32_t)SBX_FS_PATH_AT_FLAGS(SBX_FS_ACCESS_AT_FLAGS))
    return -EINVAL;
  return 0;
}

static int check_statx(uint32_t flags, uint32_t arg) {
  if (flags & ~(uint32_t)SBX_FS_PATH_AT_FLAGS(SBX_FS_STATX_AT_FLAGS))
    return -EINVAL;
  return sbx_fs_check_statx(flags, arg);
}

static int check_readlink(uint32_t flags, uint32_t arg) {
  return flags == 0 && arg >= 1 && arg <= SBX_BROKER_MAX_PAYLOAD ? 0 : -EINVAL;
}

static int check_mkdir(uint32_t flags, uint32_t arg) {
  return flags == 0 && arg <= 07777 ? 0 : -EINVAL;
}

static int check_rename(uint32_t flags, uint32_t arg) {
  if (arg != 0)
    return -EINVAL;
  if (flags & ~(uint32_t)SBX_FS_RENAME_SERVED)
    return -EINVAL;
  return sbx_fs_check_rename(flags);
}

#define OP(o) SBX_FS_OP_##o
#define FLAGS SBX_BROKER_SHOWS_FLAGS
#define ARG SBX_BROKER_SHOWS_ARG
#define NONE SBX_BROKER_SHOWS_NONE

/* What a worker may ask. Indexed by command number. Each file command is
 * one operation of the table of file-system calls (fs_calls.h), whose
 * name it carries. */
static const sbx_broker_command commands[SBX_BROKER_CMD_END] = {
    [SBX_BROKER_CMD_OPEN] = {SBX_BROKER_CMD_OPEN, OP(OPEN), FLAGS, 0, 1,
                             "read / write / create / temporary, by flags",
                             check_open},
    [SBX_BROKER_CMD_ACCESS] = {SBX_BROKER_CMD_ACCESS, OP(ACCESS), FLAGS, 0, 1,
                               "stat (F_OK), read (R_OK), write (W_OK)",
                               check_access},
    [SBX_BROKER_CMD_STAT] = {SBX_BROKER_CMD_STAT, OP(STAT), NONE, 0, 1, "stat",
                             check_none},
    [SBX_BROKER_CMD_LSTAT] = {SBX_BROKER_CMD_LSTAT, OP(STAT), NONE,
                              AT_SYMLINK_NOFOLLOW, 1, "stat", check_none},
    [SBX_BROKER_CMD_STATX] = {SBX_BROKER_CMD_STATX, OP(STAT), FLAGS, 0, 1,
                              "stat", check_statx},
    [SBX_BROKER_CMD_READLINK] = {SBX_BROKER_CMD_READLINK, OP(READLINK), NONE, 0,
                                 1, "stat", check_readlink},
    [SBX_BROKER_CMD_MKDIR] = {SBX_BROKER_CMD_MKDIR, OP(MKDIR), ARG, 0, 1,
                              "create", check_mkdir},
    [SBX_BROKER_CMD_RMDIR] = {SBX_BROKER_CMD_RMDIR, OP(RMDIR), NONE, 0, 1,
                              "create", check_none},
    [SBX_BROKER_CMD_UNLINK] = {SBX_BROKER_CMD_UNLINK, OP(UNLINK), NONE, 0, 1,
                               "create", check_none},
    [SBX_BROKER_CMD_RENAME] = {SBX_BROKER_CMD_RENAME, OP(RENAME), FLAGS, 0, 2,
                               "create, on both paths", check_rename},
};

/* Async-signal-safe. */
const sbx_broker_command *sbx_broker_command_find(uint16_t command) {
  if (command >= SBX_BROKER_CMD_END || commands[command].command == 0)
    return NULL;
  return &commands[command];
}

uint32_t sbx_broker_command_shown_flags(const sbx_broker_request_view *q) {
  const sbx_broker_command *c = sbx_broker_command_find(q->command);
  if (!c)
    return q->flags;
  uint32_t v = c->shows == SBX_BROKER_SHOWS_FLAGS ? q->flags
               : c->shows == SBX_BROKER_SHOWS_ARG ? q->arg
                                                  : 0;
  return v | c->implied_at_flags;
}

/* Async-signal-safe: the client's pre-check runs in the SIGSYS handler. */
const char *sbx_broker_command_refusal(uint16_t command, unsigned n_paths,
                                       uint32_t flags, uint32_t arg) {
  const sbx_broker_command *c = sbx_broker_command_find(command);
  if (!c)
    return "unknown command";
  if (n_paths != c->n_paths)
    return "wrong number of paths for the command";
  if (c->check(flags, arg) != 0)
    return "flags or argument out of range for the command";
  return NULL;
}

/* Async-signal-safe. */
unsigned sbx_broker_command_paths(uint16_t command) {
  const sbx_broker_command *c = sbx_broker_command_find(command);
  return c ? c->n_paths : 0;
}

const char *sbx_broker_command_name(uint16_t command) {
  if (command == SBX_BROKER_ATTACH)
    return "attach";
  const sbx_broker_command *c = sbx_broker_command_find(command);
  return c ? sbx_fs_op_name(c->op) : "unknown";
}
