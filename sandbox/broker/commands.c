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

#define STATX_FLAGS (AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT | AT_STATX_SYNC_TYPE)

static int check_none(uint32_t flags, uint32_t arg) {
  return flags == 0 && arg == 0 ? 0 : -EINVAL;
}

static int check_open(uint32_t flags, uint32_t arg) {
  return arg <= 07777 ? 0 : -EINVAL;
}

static int check_access(uint32_t flags, uint32_t arg) {
  if (flags & ~(uint32_t)(R_OK | W_OK | X_OK))
    return -EINVAL;
  if (arg & ~(uint32_t)(AT_EACCESS | AT_SYMLINK_NOFOLLOW))
    return -EINVAL;
  return 0;
}

static int check_statx(uint32_t flags, uint32_t arg) {
  if (flags & ~(uint32_t)STATX_FLAGS)
    return -EINVAL;
  if ((flags & AT_STATX_SYNC_TYPE) == AT_STATX_SYNC_TYPE)
    return -EINVAL;
  if (arg & STATX__RESERVED)
    return -EINVAL;
  return 0;
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
  if (flags & ~(uint32_t)(RENAME_NOREPLACE | RENAME_EXCHANGE))
    return -EINVAL;
  if (flags == (RENAME_NOREPLACE | RENAME_EXCHANGE))
    return -EINVAL;
  return 0;
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

/* What a worker may ask. Indexed by command number. */
static const sbx_broker_command commands[SBX_BROKER_CMD_END] = {
    [SBX_BROKER_CMD_OPEN] = {SBX_BROKER_CMD_OPEN, "open", 1,
                             "read / write / create / temporary, by flags",
                             check_open, handle_open},
    [SBX_BROKER_CMD_ACCESS] = {SBX_BROKER_CMD_ACCESS, "access", 1,
                               "stat (F_OK), read (R_OK), write (W_OK)",
                               check_access, handle_access},
    [SBX_BROKER_CMD_STAT] = {SBX_BROKER_CMD_STAT, "stat", 1, "stat",
                             check_none, handle_stat},
    [SBX_BROKER_CMD_LSTAT] = {SBX_BROKER_CMD_LSTAT, "lstat", 1, "stat",
                              check_none, handle_lstat},
    [SBX_BROKER_CMD_STATX] = {SBX_BROKER_CMD_STATX, "statx", 1, "stat",
                              check_statx, handle_statx},
    [SBX_BROKER_CMD_READLINK] = {SBX_BROKER_CMD_READLINK, "readlink", 1,
                                 "stat", check_readlink, handle_readlink},
    [SBX_BROKER_CMD_MKDIR] = {SBX_BROKER_CMD_MKDIR, "mkdir", 1, "create",
                              check_mkdir, handle_mkdir},
    [SBX_BROKER_CMD_RMDIR] = {SBX_BROKER_CMD_RMDIR, "rmdir", 1, "create",
                              check_none, handle_rmdir},
    [SBX_BROKER_CMD_UNLINK] = {SBX_BROKER_CMD_UNLINK, "unlink", 1, "create",
                               check_none, handle_unlink},
    [SBX_BROKER_CMD_RENAME] = {SBX_BROKER_CMD_RENAME, "rename", 2,
                               "create, on both paths", check_rename,
                               handle_rename},
    /* Transport, not a file operation: the server serves it itself. */
    [SBX_BROKER_CMD_ATTACH] = {SBX_BROKER_CMD_ATTACH, "attach", 0,
                               "none (a reply channel)", check_none, NULL},
};

const sbx_broker_command *sbx_broker_command_find(uint16_t command) {
  if (command >= SBX_BROKER_CMD_END || commands[command].name == NULL)
    return NULL;
  return &commands[command];
}

int sbx_broker_check_fields(uint16_t command, uint32_t flags, uint32_t arg) {
  const sbx_broker_command *c = sbx_broker_command_find(command);
  return c ? c->check(flags, arg) : -EINVAL;
}

unsigned sbx_broker_command_paths(uint16_t command) {
  const sbx_broker_command *c = sbx_broker_command_find(command);
  return c ? c->n_paths : 0;
}

const char *sbx_broker_command_name(uint16_t command) {
  const sbx_broker_command *c = sbx_broker_command_find(command);
  return c ? c->name : "unknown";
}
