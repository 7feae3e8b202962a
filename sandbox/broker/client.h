/* The broker client: how a sandboxed process asks for files.
 *
 * Why it exists: a worker cannot open files itself (layer 1 traps every
 * file-system call, Landlock denies them), so each request goes to the
 * broker over the worker's channel and the answer, an open descriptor or a
 * result, comes back. Code that knows it is sandboxed calls these functions
 * directly; everything else reaches them through the SIGSYS handler of
 * layer 1 (layer1.h).
 *
 * Every function here is async-signal-safe and thread-safe: no allocation,
 * no lock, no shared buffer. Replies come back on a reply channel that one
 * request holds alone: one of the client's pooled thread channels (each a
 * socket pair registered once with the broker and then reused, claimed
 * with an atomic exchange), or, when every pooled channel is taken (many
 * threads, or a signal handler interrupting a request on the same thread),
 * a socket pair made for that request. So concurrent requests can never
 * receive each other's replies. errno is preserved; results are returned
 * as -errno.
 *
 * What it trusts: the broker's answers, after checking their shape. What
 * the worker learns: see docs/broker.md, "What a worker learns".
 * If the broker is gone (killed), every call fails at once with -EACCES,
 * never hangs (F1); if the broker is out of descriptors, with -ENFILE (F4);
 * if the worker is, a call that would return one fails with -EMFILE.
 */
#ifndef SBX_BROKER_CLIENT_H_
#define SBX_BROKER_CLIENT_H_

#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

/* Pooled reply channels per client; more concurrent requests than this
 * fall back to a socket pair each. */
#define SBX_BROKER_CLIENT_POOL 16

typedef struct {
  int state; /* atomic: empty, free or busy (client.c) */
  int fd;    /* the worker's end of a registered thread channel */
  int pid;   /* the process that registered it, when generation is 0 */
  unsigned generation;    /* the process's generation then (client.c), or 0 */
  unsigned seq;           /* request ids on this channel */
  unsigned long long ino; /* its inode: the number still names it */
  unsigned spin;          /* polls for the reply before sleeping (client.c) */
  unsigned unspun;        /* requests since the last poll, while spin is 0 */
} sbx_broker_client_slot;

typedef struct {
  int channel;      /* the worker's end of its broker channel; not owned */
  unsigned refused; /* atomic: requests before registering again */
  unsigned polling; /* atomic: a thread is polling for its reply (client.c) */
  sbx_broker_client_slot pool[SBX_BROKER_CLIENT_POOL];
} sbx_broker_client;

/* Async-signal-safe. Forgets (does not close) pooled channels of an
 * earlier init: call it once per channel, e.g. in each forked worker. */
void sbx_broker_client_init(sbx_broker_client *client, int channel_fd);

/* Hands the broker the listener of this worker's audited seccomp layer
 * (protocol.h, LISTENER): once, before the worker's own code runs; the
 * caller closes its copy. 0 or -errno. Async-signal-safe. */
int sbx_broker_send_listener(const sbx_broker_client *client, int listener_fd);

/* Returns a descriptor (close-on-exec exactly when flags has O_CLOEXEC), or
 * -errno. */
int sbx_broker_open(const sbx_broker_client *client, const char *path,
                    int flags, mode_t mode);

/* mode: F_OK or R_OK|W_OK|X_OK (X_OK is always denied); at_flags:
 * AT_EACCESS, AT_SYMLINK_NOFOLLOW. Returns 0 or -errno. */
int sbx_broker_access(const sbx_broker_client *client, const char *path,
                      int mode, int at_flags);

int sbx_broker_stat(const sbx_broker_client *client, const char *path,
                    struct stat *out);
int sbx_broker_lstat(const sbx_broker_client *client, const char *path,
                     struct stat *out);
int sbx_broker_statx(const sbx_broker_client *client, const char *path,
                     int at_flags, unsigned mask, struct statx *out);

/* Like readlink(2): the number of bytes placed in buf, not terminated. */
ssize_t sbx_broker_readlink(const sbx_broker_client *client, const char *path,
                            char *buf, size_t size);

int sbx_broker_mkdir(const sbx_broker_client *client, const char *path,
                     mode_t mode);
int sbx_broker_rmdir(const sbx_broker_client *client, const char *path);
int sbx_broker_unlink(const sbx_broker_client *client, const char *path);
int sbx_broker_rename(const sbx_broker_client *client, const char *from,
                      const char *to, unsigned flags);

#endif /* SBX_BROKER_CLIENT_H_ */
