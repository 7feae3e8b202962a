/* The observing supervisor: records what an unmodified program asks of
 * the kernel, and lets every call run as it was made.
 *
 * Why it exists: sbx-learn writes a policy and a profile from one run of
 * a program. It needs each system call's number and register arguments
 * and, for calls that name a file, the path as the program meant it (for
 * connect and bind, a unix socket address's path). A
 * filter returning SECCOMP_RET_USER_NOTIF for (nearly) every call brings
 * each one here; the observer reads the path out of the program's memory
 * (target.h: made absolute against its working directory or dirfd,
 * lexically normalised, checked with SECCOMP_IOCTL_NOTIF_ID_VALID), hands
 * the observation to a callback and answers
 * SECCOMP_USER_NOTIF_FLAG_CONTINUE.
 *
 * CONTINUE after reading memory is exactly what supervisor.h forbids for
 * decisions (S30): the program may change the path between our read and
 * the kernel's. Here nothing is decided - every call is allowed anyway -
 * so the worst a program can do is make the record wrong, which only
 * makes the learned sandbox refuse more. Never use this to enforce.
 *
 * Children inherit the filter, so forks and execs of the program report
 * to the same listener; each observation names the calling thread.
 *
 * What it trusts: the kernel. What it refuses: nothing.
 *
 * Life cycle: o = sbx_unotify_observer_new(listener, fn, data, &error);
 * poll sbx_unotify_observer_listener(o) for POLLIN and call
 * sbx_unotify_observer_handle_one(o) until POLLHUP (no process left);
 * sbx_unotify_observer_free(o).
 */
#ifndef SBX_SUPERVISOR_OBSERVER_H_
#define SBX_SUPERVISOR_OBSERVER_H_

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <glib.h>

typedef struct {
  pid_t pid;         /* the calling thread */
  int nr;            /* system call number */
  uint64_t args[6];  /* as the registers held them */
  const char *path;  /* absolute, normalised; NULL if none or unreadable */
  const char *path2; /* the second path (rename, link), else NULL */
  bool has_open_flags;
  uint64_t open_flags; /* open family: the flags, from struct open_how too */
  /* connect and bind to an AF_INET or AF_INET6 address: the family (else
   * 0), the port and the address as text. */
  int inet_family;
  uint16_t port;
  const char *address;
  bool this_host; /* the address means this host (sbx_call_this_host) */
} sbx_unotify_observation;

/* Every pointer is valid during the call only. */
typedef void (*sbx_unotify_observe_fn)(const sbx_unotify_observation *o,
                                       void *user_data);

typedef struct sbx_unotify_observer sbx_unotify_observer;

/* Takes ownership of listener (also on failure). */
sbx_unotify_observer *sbx_unotify_observer_new(int listener,
                                               sbx_unotify_observe_fn fn,
                                               void *user_data, GError **error);
void sbx_unotify_observer_free(sbx_unotify_observer *o);
int sbx_unotify_observer_listener(const sbx_unotify_observer *o);

/* Receives one notification, reports it and lets it continue. 0 (also
 * when the target went away before it could be reported) or -errno. */
int sbx_unotify_observer_handle_one(sbx_unotify_observer *o);

#endif /* SBX_SUPERVISOR_OBSERVER_H_ */
