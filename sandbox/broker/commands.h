/* The broker's command table: for each command, what it carries and which
 * permission it needs (commands_table.c); and the handlers that serve it
 * in the broker (commands.c).
 *
 * Why it exists: what a worker may ask is visible in one place (as in
 * OpenSSH's privilege-separation monitor). The decoder, the client's
 * pre-check (both through sbx_broker_command_refusal, protocol.h) and the
 * server all read this table; nothing else lists commands, and every
 * worker type may send every command (its allowlist decides on the
 * object). ATTACH is transport (protocol.h), not a row.
 *
 * What it trusts: a request that sbx_broker_decode_request() accepted.
 * Handlers still trust no path: the resolver validates each one.
 */
#ifndef SBX_BROKER_COMMANDS_H_
#define SBX_BROKER_COMMANDS_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sandbox/broker/protocol.h"
#include "sandbox/files/fs_calls.h"
#include "sandbox/files/resolver.h"

typedef struct {
  /* in */
  const sbx_resolver *resolver;
  pid_t pid; /* the sender, as the kernel reported it */
  const sbx_broker_request_view *request;
  /* out */
  int fd;        /* descriptor to hand over, or -1 */
  void *payload; /* SBX_BROKER_MAX_PAYLOAD bytes */
  size_t payload_len;
  sbx_decision decision;
} sbx_broker_call;

/* Which field of a request holds the flags its records show. */
typedef enum {
  SBX_BROKER_SHOWS_FLAGS, /* flags (open flags, access mode, ...) */
  SBX_BROKER_SHOWS_ARG,   /* arg (mkdir's mode) */
  SBX_BROKER_SHOWS_NONE,  /* nothing but what the command implies */
} sbx_broker_shows;

typedef struct {
  uint16_t command;
  /* The operation of the table of file-system calls it performs (its
   * name is the command's name). */
  sbx_fs_op op;
  sbx_broker_shows shows;
  uint32_t implied_at_flags; /* LSTAT: AT_SYMLINK_NOFOLLOW */
  unsigned n_paths;          /* 1 or 2 */
  const char *permission;    /* the right it needs, for documentation */
  /* Field rules (see sbx_broker_command_refusal): 0 or -EINVAL.
   * Async-signal-safe. */
  int (*check)(uint32_t flags, uint32_t arg);
} sbx_broker_command;

/* The table entry for a command, or NULL. Async-signal-safe. */
const sbx_broker_command *sbx_broker_command_find(uint16_t command);

/* The command's name ("open", "stat", ...), "attach" for the transport
 * message, or "unknown". */
const char *sbx_broker_command_name(uint16_t command);

/* The flags a record of the request shows, in the vocabulary of the
 * table of file-system calls (sbx_fs_format_flags with the command's op):
 * LSTAT shows AT_SYMLINK_NOFOLLOW, MKDIR its mode. */
uint32_t sbx_broker_command_shown_flags(const sbx_broker_request_view *q);

/* The broker's side (commands.c): runs the handler of call->request's
 * command. Returns the result (>= 0 or -errno) and sets the call's fd,
 * payload and decision; -EINVAL for a command without a handler (the
 * decoder lets none through). */
int sbx_broker_command_run(sbx_broker_call *call);
bool sbx_broker_command_has_handler(uint16_t command);

#endif /* SBX_BROKER_COMMANDS_H_ */
