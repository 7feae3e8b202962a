/* The observing supervisor; see observer.h.
 *
 * Trusts the kernel; trusts nothing the target wrote, but only ever
 * records it. Which argument of which call names a file is the table of
 * file-system calls (sandbox/files/fs_calls.h), read by the same decoder
 * the supervisor uses.
 */
#include "sandbox/supervisor/observer.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "sandbox/files/fs_decode.h"
#include "sandbox/kernel/unotify/notify.h"
#include "sandbox/kernel/unotify/target.h"
#include "sandbox/supervisor/call.h"

struct sbx_unotify_observer {
  sbx_unotify_channel ch;
  sbx_unotify_observe_fn fn;
  void *user_data;
};

sbx_unotify_observer *sbx_unotify_observer_new(int listener,
                                               sbx_unotify_observe_fn fn,
                                               void *user_data,
                                               GError **error) {
  sbx_unotify_observer *o = g_new0(sbx_unotify_observer, 1);
  o->fn = fn;
  o->user_data = user_data;
  if (!sbx_unotify_channel_open(&o->ch, listener, error)) {
    g_free(o);
    return NULL;
  }
  return o;
}

void sbx_unotify_observer_free(sbx_unotify_observer *o) {
  if (!o)
    return;
  sbx_unotify_channel_close(&o->ch);
  g_free(o);
}

int sbx_unotify_observer_listener(const sbx_unotify_observer *o) {
  return o->ch.listener;
}

/* One path of a decoded call made absolute into out; false when it has
 * none or it cannot be read, and on a vanished target, which *gone then
 * says. */
static bool observe_path(sbx_unotify_target *t, int dirfd, const char *raw,
                         size_t len, char *out, bool *gone) {
  if (raw == NULL)
    return false;
  int rc = sbx_target_absolute_path(t, dirfd, raw, len, out);
  if (rc == SBX_TARGET_GONE)
    *gone = true;
  return rc == 0;
}

/* Fills the paths and open flags of a call of the table. A call the
 * decoder refuses records no path: the kernel refuses it too. */
static void observe_fs_call(sbx_unotify_target *t, const sbx_fs_call *row,
                            const struct seccomp_notif *n,
                            sbx_unotify_observation *ob, char *path,
                            char *path2, bool *gone) {
  g_autofree char *raw = g_malloc(PATH_MAX);
  g_autofree char *raw2 = g_malloc(PATH_MAX);
  sbx_fs_reader reader = sbx_target_fs_reader(t);
  uint64_t args[6];
  for (int i = 0; i < 6; i++)
    args[i] = n->data.args[i];
  sbx_fs_request q;
  int rc = sbx_fs_decode(row, args, &reader, raw, raw2, &q);
  if (rc == SBX_FS_GONE)
    *gone = true;
  if (rc < 0)
    return;
  if (q.op == SBX_FS_OP_OPEN) {
    ob->has_open_flags = true;
    ob->open_flags = q.flags;
  }
  if (observe_path(t, q.dirfd, q.path, q.path_len, path, gone))
    ob->path = path;
  if (observe_path(t, q.dirfd2, q.path2, q.path2_len, path2, gone))
    ob->path2 = path2;
}

/* connect() and bind() name a file when their address is a unix path:
 * filled like observe_path() (relative to the working directory). An
 * internet address fills the observation's family, port and address. */
static bool observe_socket_address(sbx_unotify_target *t,
                                   const struct seccomp_notif *n,
                                   sbx_unotify_observation *ob, char *path,
                                   char *address, bool *gone) {
  struct sockaddr_storage ss;
  uint64_t len = (uint32_t)n->data.args[2];
  if (len < sizeof(sa_family_t) || len > sizeof(ss))
    return false;
  memset(&ss, 0, sizeof(ss));
  int rc = sbx_target_read(t, n->data.args[1], &ss, (size_t)len);
  if (rc == -ENOENT)
    *gone = true;
  if (rc < 0)
    return false;
  if (sbx_call_inet_address(&ss, (int)len, address, &ob->port)) {
    ob->inet_family = ss.ss_family;
    ob->address = address;
    ob->this_host = sbx_call_this_host(&ss, (int)len);
    return false;
  }
  const struct sockaddr_un *sa = (const struct sockaddr_un *)&ss;
  size_t off = offsetof(struct sockaddr_un, sun_path);
  if (len <= off + 1 || len > sizeof(*sa) || sa->sun_family != AF_UNIX ||
      sa->sun_path[0] == '\0')
    return false;
  char raw[sizeof(sa->sun_path) + 1];
  memcpy(raw, sa->sun_path, len - off);
  raw[len - off] = '\0';
  rc = sbx_target_absolute_path(t, AT_FDCWD, raw, strlen(raw), path);
  if (rc == SBX_TARGET_GONE)
    *gone = true;
  return rc == 0;
}

int sbx_unotify_observer_handle_one(sbx_unotify_observer *o) {
  int rc = sbx_unotify_recv(o->ch.listener, &o->ch.buf);
  if (rc == -ENOENT)
    return 0;
  if (rc < 0)
    return rc;
  const struct seccomp_notif n = *o->ch.buf.req;
  sbx_unotify_observation ob = {.pid = (pid_t)n.pid, .nr = n.data.nr};
  memcpy(ob.args, n.data.args, sizeof(ob.args));
  const sbx_fs_call *row = sbx_fs_call_find(n.data.nr);
  bool gone = false;
  if (row) {
    g_autofree char *path = g_malloc(PATH_MAX);
    g_autofree char *path2 = g_malloc(PATH_MAX);
    sbx_unotify_target t;
    sbx_target_init(&t, o->ch.listener, n.id, (pid_t)n.pid);
    observe_fs_call(&t, row, &n, &ob, path, path2, &gone);
    sbx_target_release(&t);
    if (!gone && o->fn)
      o->fn(&ob, o->user_data);
  } else if (n.data.nr == __NR_connect || n.data.nr == __NR_bind) {
    g_autofree char *path = g_malloc(PATH_MAX);
    char address[INET6_ADDRSTRLEN];
    sbx_unotify_target t;
    sbx_target_init(&t, o->ch.listener, n.id, (pid_t)n.pid);
    if (observe_socket_address(&t, &n, &ob, path, address, &gone))
      ob.path = path;
    sbx_target_release(&t);
    if (!gone && o->fn)
      o->fn(&ob, o->user_data);
  } else if (o->fn) {
    o->fn(&ob, o->user_data);
  }
  rc = sbx_unotify_continue(o->ch.listener, &o->ch.buf, n.id);
  return rc == -ENOENT ? 0 : rc;
}
