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
 * no lock, no shared buffer. Each request makes its own reply socket pair
 * and sends one end with the request, so concurrent requests from many
 * threads (or a signal handler interrupting one) can never receive each
 * other's replies. errno is preserved; results are returned as -errno.
 *
 * What it trusts: the broker's answers, after checking their shape. What
 * the worker learns: see docs/broker.md, "What a worker learns".
 * If the broker is gone (killed, or it dropped the request for lack of
 * descriptors), every call fails at once with -EACCES, never hangs (F1).
 */
#ifndef SBX_BROKER_CLIENT_H_
#define SBX_BROKER_CLIENT_H_

#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

typedef struct {
  int channel; /* the worker's end of its broker channel; not owned */
} sbx_broker_client;

/* Async-signal-safe. */
void sbx_broker_client_init(sbx_broker_client *client, int channel_fd);

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
