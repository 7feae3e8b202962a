/* The worker <-> broker wire protocol.
 *
 * Why it exists: a worker's file request crosses a process boundary to the
 * only process allowed to open files. The format is small and fixed so the
 * broker can check every byte before acting on any of it.
 *
 * Transport: one AF_UNIX SOCK_SEQPACKET channel per worker (the channel,
 * never a message field, decides which allowlist applies). Each request is
 * one datagram:
 *
 *   sbx_broker_request (24 bytes) | path (path_len bytes, NUL last)
 *                                 | path2 (path2_len bytes, RENAME only)
 *
 * On the worker's channel it carries exactly one descriptor in one
 * SCM_RIGHTS block: the reply socket, one end of a SOCK_SEQPACKET pair the
 * client made for the request. The broker answers there with one
 * datagram:
 *
 *   sbx_broker_reply (24 bytes) | payload (payload_len bytes)
 *
 * plus, for a successful OPEN, the opened descriptor in SCM_RIGHTS.
 *
 * ATTACH, a bare header whose command is SBX_BROKER_ATTACH, makes that
 * reply socket a thread channel instead: the broker answers on it and
 * keeps it, with the allowlist of the channel it came from. ATTACH is
 * transport, not a command: it asks for nothing on the file system, so
 * the command table (commands.c) does not list it. Requests on a thread
 * channel carry no descriptor, and their replies come back on it. A
 * client uses each thread channel for one request at a time (client.h),
 * so replies cannot be mixed up, and the per-request socket pair, its two
 * descriptor passes and three closes are saved; the per-request pair
 * remains the fallback.
 *
 * What the broker trusts: nothing in a request. A datagram that is short,
 * truncated, over SBX_BROKER_MAX_REQUEST, carries the wrong descriptors, or
 * has any field a correct client never sends, closes that channel.
 *
 * Everything declared here is async-signal-safe.
 */
#ifndef SBX_BROKER_PROTOCOL_H_
#define SBX_BROKER_PROTOCOL_H_

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define SBX_BROKER_MAGIC 0x53425852u /* "SBXR" */
#define SBX_BROKER_VERSION 1

/* The command set: what a worker may ask. What each carries, needs and
 * who handles it is the table in commands.c, the one authority on it. */
typedef enum {
  SBX_BROKER_CMD_OPEN = 1, /* flags: open flags; arg: create mode */
  SBX_BROKER_CMD_ACCESS,   /* flags: F_OK|R_OK|W_OK|X_OK; arg: AT_ flags */
  SBX_BROKER_CMD_STAT,     /* payload: struct stat (symlinks followed) */
  SBX_BROKER_CMD_LSTAT,    /* payload: struct stat (not followed) */
  SBX_BROKER_CMD_STATX,    /* flags: AT_ flags; arg: mask; struct statx */
  SBX_BROKER_CMD_READLINK, /* arg: buffer size; payload: the target */
  SBX_BROKER_CMD_MKDIR,    /* arg: mode */
  SBX_BROKER_CMD_RMDIR,
  SBX_BROKER_CMD_UNLINK,
  SBX_BROKER_CMD_RENAME, /* path -> path2; flags: RENAME_NOREPLACE or
                            RENAME_EXCHANGE */
  SBX_BROKER_CMD_END,    /* one past the last command */
} sbx_broker_command_id;

/* Transport: a bare header (no path, flags or argument) on a worker
 * channel that keeps its reply socket as a thread channel. Outside the
 * command numbers. */
#define SBX_BROKER_ATTACH 0x100

/* Transport: a header whose arg is the worker's pid as it sees itself,
 * carrying the seccomp user-notification listener of the worker's audited
 * layer in SCM_RIGHTS instead of a reply socket (verdicts.h). Sent once,
 * by the worker before its own code runs; nothing answers it. */
#define SBX_BROKER_LISTENER 0x101

typedef struct {
  uint32_t magic;
  uint16_t version;
  uint16_t command;
  uint32_t id; /* echoed in the reply */
  uint32_t flags;
  uint32_t arg;
  uint16_t path_len;  /* bytes of path, its terminating NUL included */
  uint16_t path2_len; /* 0 unless the command takes two paths */
} sbx_broker_request;

enum {
  SBX_BROKER_REPLY_HAS_FD = 1u << 0, /* one descriptor in SCM_RIGHTS */
};

typedef struct {
  uint32_t magic;
  uint16_t version;
  uint16_t command;
  uint32_t id;
  int32_t result; /* >= 0, or -errno */
  uint32_t flags; /* SBX_BROKER_REPLY_* */
  uint32_t payload_len;
} sbx_broker_reply;

_Static_assert(sizeof(sbx_broker_request) == 24, "request header layout");
_Static_assert(sizeof(sbx_broker_reply) == 24, "reply header layout");

#define SBX_BROKER_MAX_REQUEST (sizeof(sbx_broker_request) + 2 * PATH_MAX)
#define SBX_BROKER_MAX_PAYLOAD PATH_MAX
#define SBX_BROKER_MAX_REPLY (sizeof(sbx_broker_reply) + SBX_BROKER_MAX_PAYLOAD)

/* A decoded request: pointers into the datagram buffer. */
typedef struct {
  uint16_t command;
  uint32_t id;
  uint32_t flags;
  uint32_t arg;
  const char *path; /* NUL-terminated, no NUL inside */
  size_t path_len;  /* strlen(path) */
  const char *path2;
  size_t path2_len;
} sbx_broker_request_view;

/* Checks one datagram of `len` bytes and fills `out`. Returns 0, or -1
 * with `*reason` set to a static description of the first violation: every
 * length, string, command number and field is checked here, so a handler
 * only ever sees a request a correct client could have sent (paths are
 * still unvalidated as paths; the resolver does that). out->command is a
 * command of the table, SBX_BROKER_ATTACH or SBX_BROKER_LISTENER. */
int sbx_broker_decode_request(const void *buf, size_t len,
                              sbx_broker_request_view *out,
                              const char **reason);

/* Whether the command table admits a request: command is one of its
 * rows, n_paths is that row's number of paths, and flags and arg pass its
 * field rule. NULL, or a static description of the first violation. The
 * decoder and the client's pre-check both ask this one function, so a
 * correct client never sends what the broker refuses. ATTACH is not a row
 * and is not admitted here. Async-signal-safe (commands.c). */
const char *sbx_broker_command_refusal(uint16_t command, unsigned n_paths,
                                       uint32_t flags, uint32_t arg);

/* The number of paths a command of the table carries (1 or 2); 0 for a
 * number that is not in the table. Async-signal-safe (commands.c). */
unsigned sbx_broker_command_paths(uint16_t command);

/* Room for one descriptor in SCM_RIGHTS. */
typedef union {
  char buf[CMSG_SPACE(sizeof(int))];
  struct cmsghdr align;
} sbx_broker_fd_cmsg;

/* Makes fd the one SCM_RIGHTS descriptor of msg, using buf (which must
 * live until the message is sent). Every message that passes a descriptor
 * (requests, replies, the control channel) is built with it. */
void sbx_broker_msg_attach_fd(struct msghdr *msg, sbx_broker_fd_cmsg *buf,
                              int fd);

#endif /* SBX_BROKER_PROTOCOL_H_ */
