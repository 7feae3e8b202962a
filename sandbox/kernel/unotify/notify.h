/* The seccomp user-notification interface, one thin function per ioctl.
 *
 * Why it exists: the supervisor (supervisor.h) and its tests speak to the
 * kernel through exactly these calls, so the rules that make a reply safe
 * are visible in one place:
 *   - a notification buffer is zeroed before SECCOMP_IOCTL_NOTIF_RECV (the
 *     kernel refuses a dirty one) and sized with SECCOMP_GET_NOTIF_SIZES,
 *     never with the build headers' sizeof;
 *   - an fd is handed over with SECCOMP_IOCTL_NOTIF_ADDFD and
 *     SECCOMP_ADDFD_FLAG_SEND, which installs it and answers the call in
 *     one step, so a target can never be left holding an fd for a call
 *     that was answered otherwise;
 *   - SECCOMP_USER_NOTIF_FLAG_CONTINUE exists here but is only legitimate
 *     for decisions that did not depend on the target's memory.
 *
 * What it trusts: the kernel. Every function returns 0 (or a value >= 0)
 * or -errno; ENOENT from the kernel means the target is gone (killed, or
 * its call interrupted) and the notification must be dropped. Nothing here
 * allocates except sbx_unotify_buffers_new().
 */
#ifndef SBX_KERNEL_UNOTIFY_NOTIFY_H_
#define SBX_KERNEL_UNOTIFY_NOTIFY_H_

#include <stddef.h>
#include <stdint.h>

#include <glib.h>
#include <linux/seccomp.h>

/* Linux 6.6 (not in Debian 12's headers): wake the supervisor on the
 * target's CPU, which saves a cross-CPU wakeup per call. */
#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif

#define SBX_UNOTIFY_ERROR (sbx_unotify_error_quark())
GQuark sbx_unotify_error_quark(void);

typedef enum {
  SBX_UNOTIFY_ERROR_UNSUPPORTED, /* the kernel lacks user notification */
  SBX_UNOTIFY_ERROR_INVALID,     /* the caller's configuration is wrong */
  SBX_UNOTIFY_ERROR_FAILED,      /* a system call failed */
} sbx_unotify_error_code;

/* Request and response buffers as large as the running kernel's structs
 * (at least as large as the build headers'). */
typedef struct {
  struct seccomp_notif *req;
  size_t req_size;
  struct seccomp_notif_resp *resp;
  size_t resp_size;
} sbx_unotify_buffers;

/* Asks the kernel for the sizes (seccomp(SECCOMP_GET_NOTIF_SIZES)) and
 * allocates both buffers. */
gboolean sbx_unotify_buffers_init(sbx_unotify_buffers *b, GError **error);
void sbx_unotify_buffers_clear(sbx_unotify_buffers *b);

/* A supervisor's end of a listener: the descriptor and its buffers. */
typedef struct {
  int listener;
  sbx_unotify_buffers buf;
} sbx_unotify_channel;

/* Takes ownership of listener (closed on failure too), sizes the buffers
 * and asks for same-CPU wakeups where the kernel has them. */
gboolean sbx_unotify_channel_open(sbx_unotify_channel *ch, int listener,
                                  GError **error);
/* Closes the listener and frees the buffers; safe to call twice. */
void sbx_unotify_channel_close(sbx_unotify_channel *ch);

/* Zeroes b->req and receives one notification into it. -ENOENT: the
 * target went away between the kernel queueing and this call; -EAGAIN on
 * a non-blocking listener with nothing pending. EINTR is retried. */
int sbx_unotify_recv(int listener, sbx_unotify_buffers *b);

/* 0 while the target is still blocked in the notified call, -ENOENT once
 * it is not (it died, or a signal interrupted the call). */
int sbx_unotify_id_valid(int listener, uint64_t id);

/* Answers the call: it returns `val` (error == 0) or -error. */
int sbx_unotify_reply(int listener, sbx_unotify_buffers *b, uint64_t id,
                      int64_t val, int error);

/* Lets the kernel run the call as the target made it. Only for decisions
 * taken on register arguments alone (see the top of this file). */
int sbx_unotify_continue(int listener, sbx_unotify_buffers *b, uint64_t id);

/* Installs a duplicate of srcfd in the target (lowest free number, with
 * O_CLOEXEC if newfd_flags has it) and answers the call with that number,
 * atomically. Returns the number or -errno; srcfd stays ours to close. */
int sbx_unotify_send_fd(int listener, uint64_t id, int srcfd,
                        unsigned newfd_flags);

/* Asks for same-CPU wakeups (Linux 6.6). -EINVAL on older kernels, which
 * callers may ignore: it is only an optimisation. */
int sbx_unotify_set_sync_wakeup(int listener);

/* Handing a listener from the filtered process to its supervisor: one
 * datagram of len bytes (at least 1) carrying fd in SCM_RIGHTS. Returns 0
 * or -errno. Async-signal-safe: used between fork and exec. */
int sbx_unotify_send_listener(int sock, const void *data, size_t len, int fd);

/* Receives such a datagram into data (len bytes) and the descriptor into
 * *fd (-1 if none; received with O_CLOEXEC). Returns the byte count, 0 at
 * EOF, or -errno: -EPROTO when the size is not len or the control data
 * was truncated (a descriptor received then is closed). EINTR is
 * retried. */
ssize_t sbx_unotify_recv_listener(int sock, void *data, size_t len, int *fd,
                                  int flags);

#endif /* SBX_KERNEL_UNOTIFY_NOTIFY_H_ */
