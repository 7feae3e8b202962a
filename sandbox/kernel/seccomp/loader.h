/* Installing a compiled program in the calling thread (or every thread).
 *
 * Loading never compiles: a precompiled program is handed to seccomp(2)
 * as it is, which is what lets the zygote compile once and let each worker
 * only load. Every load sets no_new_privs first, so no privilege is needed.
 */
#ifndef SBX_KERNEL_SECCOMP_LOADER_H_
#define SBX_KERNEL_SECCOMP_LOADER_H_

#include <stddef.h>

#include <glib.h>
#include <linux/filter.h>

enum {
  SBX_SECCOMP_TSYNC = 1 << 0,        /* apply to every thread of the process */
  SBX_SECCOMP_NEW_LISTENER = 1 << 1, /* return a user-notification fd */
};

/* Errors in this domain carry the errno value as their code. */
#define SBX_SECCOMP_ERROR (sbx_seccomp_error_quark())
GQuark sbx_seccomp_error_quark(void);

/* Loads the program on top of any already installed (stacking only ever
 * narrows). With SBX_SECCOMP_NEW_LISTENER, *listener_fd receives the
 * notification fd; otherwise listener_fd may be NULL. */
gboolean sbx_seccomp_load(const struct sock_filter *insns, size_t len,
                          unsigned flags, int *listener_fd, GError **error);

/* The same for code between fork and exec or in a signal handler:
 * async-signal-safe, allocates nothing. Returns 0 or the listener fd on
 * success, -errno on failure. */
int sbx_seccomp_load_raw(const struct sock_filter *insns, size_t len,
                         unsigned flags);

/* What a failed load went wrong at, for the GError of sbx_seccomp_load. */
typedef enum {
  SBX_SECCOMP_STEP_ARGUMENTS,
  SBX_SECCOMP_STEP_NO_NEW_PRIVS,
  SBX_SECCOMP_STEP_SECCOMP,
} sbx_seccomp_load_step;

typedef struct {
  sbx_seccomp_load_step failed_step; /* meaningful when the result is < 0 */
  long blocking_thread; /* TSYNC: the thread that could not be synced */
} sbx_seccomp_load_report;

/* sbx_seccomp_load_raw, saying where it failed. Async-signal-safe. */
long sbx_seccomp_load_reported_raw(const struct sock_filter *insns, size_t len,
                                   unsigned flags,
                                   sbx_seccomp_load_report *report);

#endif /* SBX_KERNEL_SECCOMP_LOADER_H_ */
