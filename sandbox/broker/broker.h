/* The broker process, as the host sees it.
 *
 * Why it exists: workers cannot open files; the broker, a separate process
 * forked by the host before anything untrusted runs, opens them on their
 * behalf after checking each request against the allowlist of the worker's
 * type. The broker is itself sandboxed (its own seccomp policy, and a
 * Landlock ruleset equal to the union of its allowlists), so even a
 * compromised broker reaches only what some worker type may reach.
 *
 * Life cycle (host side):
 *   1. Build one sbx_allowlist per worker type (permissions.h).
 *   2. sbx_broker_start() starts the broker: a fork that execs the broker
 *      program libsbx carries (broker_process.h), so the broker shares no
 *      memory and no address-space layout with the host.
 *   3. sbx_broker_connect(broker, type) once per worker: a new channel, of
 *      which the host gets the worker's end to hand over (to the zygote's
 *      spawn request, or to itself for in-process use). The channel, not
 *      any message, decides which allowlist applies.
 *   4. The worker talks to the broker with client.h (directly, or through
 *      layer 1's SIGSYS handler, layer1.h).
 *   5. sbx_broker_stop() closes the control channel; the broker exits
 *      after it and is reaped. The broker also dies with the host
 *      (PR_SET_PDEATHSIG).
 *
 * Bounds: no call here waits for the broker for ever. A control request
 * (connect, stats) that gets no answer within SBX_BROKER_REPLY_TIMEOUT_MS
 * fails, naming the broker and the timeout (a broker that answers later
 * is not confused with it: replies carry the request's id). A broker that
 * does not leave within SBX_BROKER_EXIT_TIMEOUT_MS of its control channel
 * closing is killed (SIGKILL) and reaped.
 *
 * What it trusts: the host and the allowlists it passes. Nothing a worker
 * sends (server.h).
 */
#ifndef SBX_BROKER_BROKER_H_
#define SBX_BROKER_BROKER_H_

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <glib.h>

#include "sandbox/files/permissions.h"
#include "sandbox/broker/server.h"

/* How long the host waits for the broker: to be ready after it forks, to
 * answer one control request, to leave once its control channel closes,
 * and to be reaped after SIGKILL. */
#define SBX_BROKER_START_TIMEOUT_MS 20000
#define SBX_BROKER_REPLY_TIMEOUT_MS 5000
#define SBX_BROKER_EXIT_TIMEOUT_MS 2000
#define SBX_BROKER_REAP_TIMEOUT_MS 2000

typedef struct {
  /* One per worker type; borrowed for the duration of sbx_broker_start
   * (the broker gets its own copy, written before the fork). */
  const sbx_allowlist *const *allowlists;
  size_t n_allowlists;
  /* Where audit lines go (audit.h), or -1. The broker keeps a duplicate;
   * the caller keeps its own descriptor. The broker never waits on it: a
   * pipe or terminal is reopened so that the broker has a description of
   * its own to make non-blocking, and the caller's keeps its flags
   * (sbx_audit_open says what happens when that is impossible). */
  int audit_fd;
  bool audit_grants; /* also log granted requests (costs a write each) */
  /* The broker's RLIMIT_NOFILE (soft and hard), or 0 to keep the host's.
   * When it runs out, requests fail with ENFILE until descriptors are free
   * again (F4); tests lower it to get there quickly. */
  unsigned max_fds;
  /* Dangerous: run the broker without its own seccomp filter and Landlock
   * ruleset. Only for measuring what those layers cost. */
  bool dangerously_unsandboxed;
  /* Per allowlist (NULL, or an entry NULL: none for that type): the
   * seccomp layer whose errno verdicts that type's workers report through
   * a user-notification listener (sandbox/api/prepare.h, audit_syscalls).
   * The broker answers each with the errno this program returns and logs
   * one line per distinct call. Borrowed for the call. */
  const sbx_bpf_program *const *verdict_programs;
  /* Learn what the workers need (server.h, sbx_broker_server_set_learning):
   * requests outside their rules are granted and kept, verdict listeners
   * let every call through. The broker's own Landlock then covers the
   * whole file system. */
  bool learn;
} sbx_broker_config;

typedef struct sbx_broker sbx_broker;

/* Starts the broker; returns once it is serving, or NULL with
 * *error saying what failed (in the host or in the broker's own set-up;
 * a broker not ready within SBX_BROKER_START_TIMEOUT_MS is killed). */
sbx_broker *sbx_broker_start(const sbx_broker_config *config, GError **error);

/* A new channel for one worker of `type` (an allowlist's name). Returns
 * the worker's end (SOCK_SEQPACKET, close-on-exec; the caller owns it), or
 * -1 with *error set. Safe from any host thread: requests on the control
 * channel are served one at a time, each within SBX_BROKER_REPLY_TIMEOUT_MS. */
int sbx_broker_connect(sbx_broker *broker, const char *type, GError **error);

/* The same for a worker that also has rules of its own (`grants`,
 * borrowed; NULL or empty: as sbx_broker_connect). Its allowlist is its
 * type's followed by them, on this channel only, until the channel and
 * every thread channel attached through it close. Each grant must lie
 * under a GRANTABLE entry of the type (sbx_allowlist_grant_ceiling): the
 * broker's own Landlock ruleset covers nothing else. The broker checks
 * that again and refuses the channel (EPERM) if not. */
int sbx_broker_connect_with_grants(sbx_broker *broker, const char *type,
                                   const sbx_allowlist *grants, GError **error);

/* The same in steps, so that the caller can start the worker while the
 * broker adds its channel. _prepare checks the request and makes the
 * channel, sending nothing: it gives the worker's end in *channel (the
 * caller owns it), or returns NULL with *error set and *channel -1.
 * _send sends the broker's request (once; a failure is kept for
 * _finish). _begin is _prepare then _send, returning NULL with *error
 * set when the request could not be sent. _finish sends the request if
 * _send was not called, waits for the broker's answer within
 * SBX_BROKER_REPLY_TIMEOUT_MS of the send, and frees the handle: FALSE
 * with *error set (the same errors as sbx_broker_connect_with_grants)
 * when the broker refused the channel or did not answer; the caller then
 * closes *channel. Requests sent on the channel before the broker adds it
 * wait in the socket; one whose peer closed first is dropped when added.
 * The calling thread must call _finish, and make no other call on the
 * broker between _send and _finish: other threads' control requests wait
 * until then. */
typedef struct sbx_broker_connecting sbx_broker_connecting;
sbx_broker_connecting *sbx_broker_connect_prepare(sbx_broker *broker,
                                                  const char *type,
                                                  const sbx_allowlist *grants,
                                                  int *channel, GError **error);
void sbx_broker_connect_send(sbx_broker_connecting *connecting);
sbx_broker_connecting *sbx_broker_connect_begin(sbx_broker *broker,
                                                const char *type,
                                                const sbx_allowlist *grants,
                                                int *channel, GError **error);
gboolean sbx_broker_connect_finish(sbx_broker_connecting *connecting,
                                   GError **error);

pid_t sbx_broker_pid(const sbx_broker *broker);

/* The broker's counters (server.h), for tests and status reports. */
gboolean sbx_broker_get_stats(sbx_broker *broker, sbx_broker_stats *out,
                              GError **error);

/* What a learning broker (sbx_broker_config.learn) was asked for beyond
 * each type's rules, as a GVariant of type SBX_BROKER_LEARNED_TYPE
 * (server.h): per type its name, the rules that would have granted the
 * requests, and the system calls its verdict layer refused, with their
 * arguments. Empty when not learning. */
GVariant *sbx_broker_learned(sbx_broker *broker, GError **error);

/* Stops the broker and frees the handle; *status (may be NULL) gets its
 * wait status. Workers still connected see -EACCES from then on. Returns
 * within SBX_BROKER_EXIT_TIMEOUT_MS + SBX_BROKER_REAP_TIMEOUT_MS: a broker
 * that does not leave in time is killed (the status then says SIGKILL);
 * FALSE only when it cannot be reaped at all. NULL is ignored. */
gboolean sbx_broker_stop(sbx_broker *broker, int *status, GError **error);

#endif /* SBX_BROKER_BROKER_H_ */
