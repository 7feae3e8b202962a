/* The commands' handlers: what the broker does for each command of the
 * table (commands_table.c). Each hands the request to the resolver, which
 * trusts no path; the handlers trust the decoded request for its shape.
 */
#include "sandbox/broker/commands.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
  int rc = sbx_resolver_stat(c->resolver, c->pid, c->request->path, follow, &st,
                             &c->decision);
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

typedef int (*command_handler)(sbx_broker_call *call);

static const command_handler handlers[SBX_BROKER_CMD_END] = {
    [SBX_BROKER_CMD_OPEN] = handle_open,
    [SBX_BROKER_CMD_ACCESS] = handle_access,
    [SBX_BROKER_CMD_STAT] = handle_stat,
    [SBX_BROKER_CMD_LSTAT] = handle_lstat,
    [SBX_BROKER_CMD_STATX] = handle_statx,
    [SBX_BROKER_CMD_READLINK] = handle_readlink,
    [SBX_BROKER_CMD_MKDIR] = handle_mkdir,
    [SBX_BROKER_CMD_RMDIR] = handle_rmdir,
    [SBX_BROKER_CMD_UNLINK] = handle_unlink,
    [SBX_BROKER_CMD_RENAME] = handle_rename,
};

bool sbx_broker_command_has_handler(uint16_t command) {
  return command < SBX_BROKER_CMD_END && handlers[command] != NULL;
}

int sbx_broker_command_run(sbx_broker_call *call) {
  uint16_t command = call->request->command;
  if (!sbx_broker_command_find(command) ||
      !sbx_broker_command_has_handler(command))
    return -EINVAL;
  return handlers[command](call);
}
