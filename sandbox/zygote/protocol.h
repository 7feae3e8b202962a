/* The host <-> zygote wire protocol, over one SOCK_SEQPACKET socket pair.
 *
 * Why it exists: the zygote is a fork server that never runs host code
 * after it starts, so everything the host wants (spawn a worker, report on
 * it) crosses this socket as one fixed-layout message per datagram. Both
 * ends are the same binary (the zygote is a fork of the host, or a fresh
 * exec of its executable: fresh.h), so the layout is plain C structs; each side
 * still checks every length, count and index before using it.
 *
 * What it trusts: the host trusts the zygote (it runs no untrusted code);
 * the zygote trusts the host. Neither trusts a message's lengths: a
 * datagram that is short, truncated (MSG_TRUNC/MSG_CTRUNC) or carries more
 * descriptors than announced is refused and its descriptors are closed.
 *
 * Messages (request_id pairs a reply with its request):
 *   zygote -> host  READY          init done; body: sbx_zygote_ready
 *   zygote -> host  INIT_FAILED    body: NUL-terminated reason
 *   host -> zygote  SPAWN          body: sbx_zygote_spawn_body + payload;
 *                                  SCM_RIGHTS: the worker's descriptors,
 *                                  then its broker channel if it has one
 *   zygote -> host  SPAWNED        body: sbx_zygote_spawned; SCM_CREDENTIALS
 *                                  names the worker, so the kernel
 *                                  translates its pid into the host's pid
 *                                  namespace
 *   zygote -> host  SPAWN_FAILED   body: sbx_zygote_spawn_failed
 *   zygote -> host  EXITED         unsolicited, once per worker:
 *                                  sbx_zygote_exited
 *   host -> zygote  STATUS         no body
 *   zygote -> host  STATUS_REPLY   body: sbx_zygote_status
 *   zygote -> pooled worker  JOB   once, on the worker's own socket
 *                                  pair: sbx_zygote_job + payload;
 *                                  SCM_RIGHTS: n_user descriptors, then
 *                                  the broker and message channels
 *
 * Everything here is async-signal-safe and allocates nothing: the zygote
 * uses it between fork and exec.
 */
#ifndef SBX_ZYGOTE_PROTOCOL_H_
#define SBX_ZYGOTE_PROTOCOL_H_

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sandbox/zygote/report.h"

#define SBX_ZYGOTE_MAGIC 0x5b7a7967u /* "[zyg" */
#define SBX_ZYGOTE_MAX_PAYLOAD (64 * 1024)
#define SBX_ZYGOTE_MAX_FDS 16  /* descriptors a worker may be handed */
#define SBX_ZYGOTE_MAX_POOL 64 /* workers of one type kept forked ahead */
#define SBX_ZYGOTE_MAX_MESSAGE                                 \
  (sizeof(sbx_zygote_header) + sizeof(sbx_zygote_spawn_body) + \
   SBX_ZYGOTE_MAX_PAYLOAD)

typedef enum {
  SBX_ZMSG_READY = 1,
  SBX_ZMSG_INIT_FAILED,
  SBX_ZMSG_SPAWN,
  SBX_ZMSG_SPAWNED,
  SBX_ZMSG_SPAWN_FAILED,
  SBX_ZMSG_EXITED,
  SBX_ZMSG_STATUS,
  SBX_ZMSG_STATUS_REPLY,
  SBX_ZMSG_JOB,
} sbx_zygote_msg_type;

typedef struct {
  uint32_t magic;
  uint32_t type; /* sbx_zygote_msg_type */
  uint32_t request_id;
  uint32_t body_len; /* bytes after this header */
} sbx_zygote_header;

typedef struct {
  int32_t pid; /* the zygote's own pid in the host's pid namespace */
} sbx_zygote_ready;

enum {
  SBX_ZSPAWN_HAS_BROKER_CHANNEL = 1u << 0,
  /* The host's message channel to the worker: the last descriptor. */
  SBX_ZSPAWN_HAS_MESSAGE_CHANNEL = 1u << 1,
};

typedef struct {
  uint32_t process_type; /* index into the zygote's type table */
  uint32_t n_fds;        /* worker descriptors (not counting the channel) */
  uint32_t flags;        /* SBX_ZSPAWN_* */
  uint32_t payload_len;  /* bytes following this struct */
} sbx_zygote_spawn_body;

/* A pooled worker's one job (server.h, "Warm pool"). */
typedef struct {
  uint32_t n_user;      /* the host's descriptors and /dev/null fills */
  uint32_t flags;       /* SBX_ZSPAWN_*: the channels that follow them */
  uint32_t payload_len; /* bytes following this struct */
  uint32_t reserved;
} sbx_zygote_job;

typedef struct {
  int32_t zygote_pid; /* the worker's pid inside the zygote's namespace */
} sbx_zygote_spawned;

typedef struct {
  int32_t error; /* errno */
  char what[48]; /* NUL-terminated: which step failed */
} sbx_zygote_spawn_failed;

typedef struct {
  int32_t zygote_pid;
  int32_t wait_status; /* as waitpid(2) writes it */
  sbx_worker_report report;
} sbx_zygote_exited;

typedef struct {
  uint32_t live;     /* workers not yet reaped */
  uint32_t capacity; /* most workers alive at once */
  uint64_t spawned;
  uint64_t exited;
  uint32_t pooled; /* workers forked ahead, waiting for a job */
  uint32_t reserved;
} sbx_zygote_status;

/* Sends one message: header + body, optionally with descriptors
 * (SCM_RIGHTS, n_fds may be 0) and a pid to name in SCM_CREDENTIALS (0:
 * none). Returns 0 or -errno. Async-signal-safe. */
int sbx_zygote_send(int sock, uint32_t type, uint32_t request_id,
                    const void *body, size_t body_len, const int *fds,
                    size_t n_fds, pid_t cred_pid);

/* Receives one message into buf (capacity buf_len, at least a header).
 * On success returns the total length (header included), fills *n_fds
 * with the descriptors received (at most max_fds; each is O_CLOEXEC) and,
 * if cred_pid is not NULL, the pid from SCM_CREDENTIALS (0 if none).
 * Returns 0 on EOF, -errno on failure; -EBADMSG for a short, truncated or
 * malformed datagram (its descriptors are closed). Async-signal-safe. */
ssize_t sbx_zygote_recv(int sock, void *buf, size_t buf_len, int *fds,
                        size_t max_fds, size_t *n_fds, pid_t *cred_pid);

#endif /* SBX_ZYGOTE_PROTOCOL_H_ */
