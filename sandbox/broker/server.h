/* The broker's request loop: channels in, decisions out.
 *
 * Why it exists: this is the code that runs inside the broker process,
 * between the worker channels and the resolver. It owns the channels, reads
 * one datagram at a time from each, dispatches through the command table
 * and answers on the reply socket that came with the request, or on the
 * thread channel the request came in on (protocol.h, ATTACH).
 *
 * What it trusts: the control channel (from the host) and the allowlists it
 * was given. What it refuses: anything else a channel sends that a correct
 * client would not (see protocol.h). A bad message closes its channel
 * only; the broker keeps serving the others (B1-B8).
 *
 * Fairness and cost: channels are watched with epoll (level-triggered,
 * many events per wait) and served in turns per worker: a readable channel
 * joins its worker's queue, and a turn serves one request of each worker
 * with a queued channel, so a worker flooding from many threads (each on
 * a thread channel of its own) gets one request per turn, like any other,
 * and a request waits for at most one request of each worker ahead of it.
 * Replies are sent with MSG_DONTWAIT, so a client that never reads cannot
 * block the broker; on a thread channel the broker's send buffer is small,
 * so such a client holds a few replies at most. A request on a thread
 * channel costs recvmsg, the resolver's calls (for an open: openat2, an
 * fstat when the entry is recursive or the open writes, fcntl to drop the
 * O_NONBLOCK the broker opens with), sendmsg and the close of the
 * descriptor handed over; one epoll_wait serves a turn of every worker
 * that is ready. Nothing is allocated per request.
 * The audit log (audit.h) is written without waiting, and denials go
 * through a budget per worker (a worker channel and the thread channels
 * attached through it): a paused reader of the log or a worker that
 * floods it with denials costs lines, never a decision or another
 * worker's time. The loop wakes on its own only while a `suppressed` or
 * `dropped` line is owed.
 */
#ifndef SBX_BROKER_SERVER_H_
#define SBX_BROKER_SERVER_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <glib.h>

#include "sandbox/broker/audit.h"
#include "sandbox/files/permissions.h"
#include "sandbox/kernel/seccomp/bpf.h"

/* The host <-> broker control protocol (host side: broker.c). One datagram
 * per message on a SOCK_SEQPACKET pair. */
#define SBX_BROKER_CONTROL_MAGIC 0x53425843u /* "SBXC" */

typedef enum {
  SBX_BROKER_CONTROL_ADD_CHANNEL = 1, /* arg: type index; SCM_RIGHTS: fd */
  SBX_BROKER_CONTROL_STATUS,          /* reply carries the counters */
  /* As ADD_CHANNEL, and the request is followed by the worker's own rules:
   * an allowlist (sbx_allowlist_to_variant's bytes) of at most
   * SBX_BROKER_CONTROL_MAX_GRANTS bytes. */
  SBX_BROKER_CONTROL_ADD_CHANNEL_GRANTS,
  /* SCM_RIGHTS: a memory file the broker writes what it learned to
   * (sbx_broker_server_write_learned); the reply's result is its size. */
  SBX_BROKER_CONTROL_LEARNED,
} sbx_broker_control_op;

#define SBX_BROKER_CONTROL_MAX_GRANTS 32768

typedef struct {
  uint32_t magic;
  uint32_t op;
  uint32_t arg;
  uint32_t id; /* echoed in the reply: a late reply is told apart */
} sbx_broker_control_request;

typedef struct {
  uint64_t channels;         /* open worker channels */
  uint64_t thread_channels;  /* open thread channels (protocol.h, ATTACH) */
  uint64_t requests;         /* requests answered */
  uint64_t denied;           /* of which denied by the allowlist */
  uint64_t bad_messages;     /* channels closed for a malformed message */
  uint64_t dropped;          /* requests failed for lack of descriptors */
  uint64_t audit_suppressed; /* denials over their worker's audit budget */
  uint64_t audit_dropped;    /* audit lines the sink could not take */
} sbx_broker_stats;

typedef struct {
  uint32_t magic;
  int32_t result; /* 0 or -errno */
  uint32_t id;    /* the request's; 0 for the start-up message */
  uint32_t pad;
  sbx_broker_stats stats;
} sbx_broker_control_reply;

typedef struct sbx_broker_server sbx_broker_server;

/* A server with no types and no channels. The audit sink is borrowed
 * (the server writes through it and keeps its counts there). It lives as
 * long as the broker process: nothing frees it. */
sbx_broker_server *sbx_broker_server_new(sbx_audit *audit);

/* Adds a worker type; its index (0, 1, ...) is what ADD_CHANNEL names.
 * Opens the resolver's root directories. `list` is borrowed. */
gboolean sbx_broker_server_add_type(sbx_broker_server *server,
                                    const sbx_allowlist *list, GError **error);

/* The seccomp layer whose errno verdicts the workers of `type` report
 * through a listener (verdicts.h, protocol.h LISTENER); borrowed for the
 * server's life. Call before the broker confines itself: it asks the
 * kernel for the notification sizes. */
gboolean sbx_broker_server_set_verdicts(sbx_broker_server *server, size_t type,
                                        const sbx_bpf_program *program,
                                        GError **error);

/* Learning (sbx_sandbox_config.learn_dir): a request that a type's rules
 * refuse is decided again under `everything` (borrowed for the server's
 * life; the broker's own Landlock must cover it), and when that grants it
 * the rule that would have granted it is kept for the type; a verdict
 * listener lets every call through and keeps its number. Before any type
 * is added. */
gboolean sbx_broker_server_set_learning(sbx_broker_server *server,
                                        const sbx_allowlist *everything,
                                        GError **error);

/* Writes what was learned to fd (a memory file the host passed) as one
 * GVariant of type SBX_BROKER_LEARNED_TYPE: per type, its name, the rules,
 * and per system call its number and what each of its six arguments was
 * seen holding (sbx_arg_seen: overflow, values, mask). Returns the bytes
 * written or -errno. */
int sbx_broker_server_write_learned(sbx_broker_server *server, int fd);
#define SBX_BROKER_LEARNED_TYPE "a(sasa(ia(batt)))"

/* Takes ownership of `fd`, a SOCK_SEQPACKET channel to one worker of type
 * `type_index`. */
gboolean sbx_broker_server_add_channel(sbx_broker_server *server, int fd,
                                       size_t type_index, GError **error);

/* The same for a worker with rules of its own (`grants`, owned, freed on
 * every path): its allowlist is its type's followed by them, for this
 * channel and the thread channels attached through it, until the last of
 * them closes. Every grant must lie under a GRANTABLE entry of the type
 * (sbx_allowlist_grant_ceiling); fd is closed and nothing added if one
 * does not. */
gboolean sbx_broker_server_add_channel_with_grants(sbx_broker_server *server,
                                                   int fd, size_t type_index,
                                                   sbx_allowlist *grants,
                                                   GError **error);

/* Serves the control channel `control_fd` (owned) and every channel until
 * the control channel reaches end of file, then writes the audit lines
 * still owed if the sink takes them at once. Returns 0, or -errno if epoll
 * fails for a reason other than EINTR. */
int sbx_broker_server_run(sbx_broker_server *server, int control_fd);

#endif /* SBX_BROKER_SERVER_H_ */
