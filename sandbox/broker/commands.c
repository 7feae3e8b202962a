/* The command table and its handlers; see commands.h.
 *
 * Trusts decoded requests for their shape only; every path goes through
 * the resolver, which trusts none.
 */
#include "sandbox/broker/commands.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
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
  return flags == 0 && arg >= 1 && arg <= SBX_BROKER_MAX_PAYLOAD ? 0
                                                                  : -EINVAL;
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

static int handle_open(sbx_broker_call *c) {
  const sbx_broker_request_view *q = c->request;
  int fd = sbx_resolver_open(c->resolver, c->pid, q->path, (int)q->flags,
                             (mode_t)q->arg, &c->decision);
  if (fd < 0)
    return fd;
  c->fd = fd;
  return 0;
}

static int handle_access(sbx_broker_call *c) {
  const sbx_broker_request_view *q = c->request;
  return sbx_resolver_access(c->resolver, c->pid, q->path, (int)q->flags,
                             (int)q->arg, &c->decision);
}

static int stat_common(sbx_broker_call *c, bool follow) {
  struct stat st;
  int rc = sbx_resolver_stat(c->resolver, c->pid, c->request->path, follow,
                             &st, &c->decision);
  if (rc == 0) {
    memcpy(c->payload, &st, sizeof(st));
    c->payload_len = sizeof(st);
  }
  return rc;
}

static int handle_stat(sbx_broker_call *c) {
  return stat_common(c, true);
}

static int handle_lstat(sbx_broker_call *c) {
  return stat_common(c, false);
}

static int handle_statx(sbx_broker_call *c) {
  const sbx_broker_request_view *q = c->request;
  struct statx stx;
  memset(&stx, 0, sizeof(stx));
  int rc = sbx_resolver_statx(c->resolver, c->pid, q->path, (int)q->flags,
                              q->arg, &stx, &c->decision);
  if (rc == 0) {
    memcpy(c->payload, &stx, sizeof(stx));
    c->payload_len = sizeof(stx);
  }
  return rc;
}

static int handle_readlink(sbx_broker_call *c) {
  const sbx_broker_request_view *q = c->request;
  ssize_t n = sbx_resolver_readlink(c->resolver, c->pid, q->path, c->payload,
                                    q->arg, &c->decision);
  if (n < 0)
    return (int)n;
  c->payload_len = (size_t)n;
  return (int)n;
}

static int handle_mkdir(sbx_broker_call *c) {
  const sbx_broker_request_view *q = c->request;
  return sbx_resolver_mkdir(c->resolver, c->pid, q->path, (mode_t)q->arg,
                            &c->decision);
}

static int handle_rmdir(sbx_broker_call *c) {
  return sbx_resolver_rmdir(c->resolver, c->pid, c->request->path,
                            &c->decision);
}

static int handle_unlink(sbx_broker_call *c) {
  return sbx_resolver_unlink(c->resolver, c->pid, c->request->path,
                             &c->decision);
}

static int handle_rename(sbx_broker_call *c) {
  const sbx_broker_request_view *q = c->request;
  return sbx_resolver_rename(c->resolver, c->pid, q->path, q->path2, q->flags,
                             &c->decision);
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
                             check_open, handle_open},
    [SBX_BROKER_CMD_ACCESS] = {SBX_BROKER_CMD_ACCESS, OP(ACCESS), FLAGS, 0, 1,
                               "stat (F_OK), read (R_OK), write (W_OK)",
                               check_access, handle_access},
    [SBX_BROKER_CMD_STAT] = {SBX_BROKER_CMD_STAT, OP(STAT), NONE, 0, 1, "stat",
                             check_none, handle_stat},
    [SBX_BROKER_CMD_LSTAT] = {SBX_BROKER_CMD_LSTAT, OP(STAT), NONE,
                              AT_SYMLINK_NOFOLLOW, 1, "stat", check_none,
                              handle_lstat},
    [SBX_BROKER_CMD_STATX] = {SBX_BROKER_CMD_STATX, OP(STAT), FLAGS, 0, 1,
                              "stat", check_statx, handle_statx},
    [SBX_BROKER_CMD_READLINK] = {SBX_BROKER_CMD_READLINK, OP(READLINK), NONE, 0,
                                 1, "stat", check_readlink, handle_readlink},
    [SBX_BROKER_CMD_MKDIR] = {SBX_BROKER_CMD_MKDIR, OP(MKDIR), ARG, 0, 1,
                              "create", check_mkdir, handle_mkdir},
    [SBX_BROKER_CMD_RMDIR] = {SBX_BROKER_CMD_RMDIR, OP(RMDIR), NONE, 0, 1,
                              "create", check_none, handle_rmdir},
    [SBX_BROKER_CMD_UNLINK] = {SBX_BROKER_CMD_UNLINK, OP(UNLINK), NONE, 0, 1,
                               "create", check_none, handle_unlink},
    [SBX_BROKER_CMD_RENAME] = {SBX_BROKER_CMD_RENAME, OP(RENAME), FLAGS, 0, 2,
                               "create, on both paths", check_rename,
                               handle_rename},
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
