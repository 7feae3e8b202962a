/* The observing supervisor; see observer.h.
 *
 * Trusts the kernel; trusts nothing the target wrote, but only ever
 * records it. Which argument of which call names a file is one table.
 */
#include "sandbox/supervisor/observer.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "sandbox/kernel/unotify/notify.h"
#include "sandbox/kernel/unotify/target.h"

#ifndef __NR_fchmodat2
#define __NR_fchmodat2 452
#endif

struct sbx_unotify_observer {
  sbx_unotify_channel ch;
  sbx_unotify_observe_fn fn;
  void *user_data;
};

enum { CWD = -1 }; /* the path is relative to the working directory */

typedef struct {
  int nr;
  int dirfd_arg; /* CWD, or the argument holding the directory fd */
  int path_arg;
  int dirfd2_arg; /* second path (CWD when it has no dirfd), if path2_arg */
  int path2_arg;  /* -1: none */
  int flags_arg;  /* open flags, -1: none; -2: in struct open_how */
} path_call;

/* The calls that name files, and where. */
static const path_call path_calls[] = {
    {__NR_open, CWD, 0, CWD, -1, 1},
    {__NR_creat, CWD, 0, CWD, -1, -1},
    {__NR_openat, 0, 1, CWD, -1, 2},
    {__NR_openat2, 0, 1, CWD, -1, -2},
    {__NR_stat, CWD, 0, CWD, -1, -1},
    {__NR_lstat, CWD, 0, CWD, -1, -1},
    {__NR_newfstatat, 0, 1, CWD, -1, -1},
    {__NR_statx, 0, 1, CWD, -1, -1},
    {__NR_access, CWD, 0, CWD, -1, -1},
    {__NR_faccessat, 0, 1, CWD, -1, -1},
    {__NR_faccessat2, 0, 1, CWD, -1, -1},
    {__NR_readlink, CWD, 0, CWD, -1, -1},
    {__NR_readlinkat, 0, 1, CWD, -1, -1},
    {__NR_mkdir, CWD, 0, CWD, -1, -1},
    {__NR_mkdirat, 0, 1, CWD, -1, -1},
    {__NR_unlink, CWD, 0, CWD, -1, -1},
    {__NR_unlinkat, 0, 1, CWD, -1, -1},
    {__NR_rmdir, CWD, 0, CWD, -1, -1},
    {__NR_rename, CWD, 0, CWD, 1, -1},
    {__NR_renameat, 0, 1, 2, 3, -1},
    {__NR_renameat2, 0, 1, 2, 3, -1},
    {__NR_link, CWD, 0, CWD, 1, -1},
    {__NR_linkat, 0, 1, 2, 3, -1},
    {__NR_symlink, CWD, 1, CWD, -1, -1},
    {__NR_symlinkat, 1, 2, CWD, -1, -1},
    {__NR_mknod, CWD, 0, CWD, -1, -1},
    {__NR_mknodat, 0, 1, CWD, -1, -1},
    {__NR_chmod, CWD, 0, CWD, -1, -1},
    {__NR_fchmodat, 0, 1, CWD, -1, -1},
    {__NR_fchmodat2, 0, 1, CWD, -1, -1},
    {__NR_chown, CWD, 0, CWD, -1, -1},
    {__NR_lchown, CWD, 0, CWD, -1, -1},
    {__NR_fchownat, 0, 1, CWD, -1, -1},
    {__NR_truncate, CWD, 0, CWD, -1, -1},
    {__NR_utime, CWD, 0, CWD, -1, -1},
    {__NR_utimes, CWD, 0, CWD, -1, -1},
    {__NR_utimensat, 0, 1, CWD, -1, -1},
    {__NR_futimesat, 0, 1, CWD, -1, -1},
    {__NR_statfs, CWD, 0, CWD, -1, -1},
    {__NR_getxattr, CWD, 0, CWD, -1, -1},
    {__NR_lgetxattr, CWD, 0, CWD, -1, -1},
    {__NR_listxattr, CWD, 0, CWD, -1, -1},
    {__NR_llistxattr, CWD, 0, CWD, -1, -1},
    {__NR_setxattr, CWD, 0, CWD, -1, -1},
    {__NR_lsetxattr, CWD, 0, CWD, -1, -1},
    {__NR_removexattr, CWD, 0, CWD, -1, -1},
    {__NR_lremovexattr, CWD, 0, CWD, -1, -1},
    {__NR_inotify_add_watch, CWD, 1, CWD, -1, -1},
    {__NR_chdir, CWD, 0, CWD, -1, -1},
    {__NR_execve, CWD, 0, CWD, -1, -1},
    {__NR_execveat, 0, 1, CWD, -1, -1},
};

static const path_call *find_path_call(int nr) {
  for (size_t i = 0; i < G_N_ELEMENTS(path_calls); i++)
    if (path_calls[i].nr == nr)
      return &path_calls[i];
  return NULL;
}

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

static int dirfd_of(const struct seccomp_notif *n, int arg) {
  return arg == CWD ? AT_FDCWD : (int)(uint32_t)n->data.args[arg];
}

/* Fills path (PATH_MAX bytes) when the call names one; false otherwise
 * (no path, an empty one, unreadable memory) and on a vanished target,
 * which *gone then says. */
static bool observe_path(sbx_unotify_target *t, const struct seccomp_notif *n,
                         int dirfd_arg, int path_arg, char *path, bool *gone) {
  int rc = sbx_target_read_path(t, dirfd_of(n, dirfd_arg),
                                n->data.args[path_arg], path, 0);
  if (rc == SBX_TARGET_GONE)
    *gone = true;
  return rc == 0;
}

/* connect() and bind() name a file when their address is a unix path:
 * filled like observe_path() (relative to the working directory). */
static bool observe_socket_path(sbx_unotify_target *t,
                                const struct seccomp_notif *n, char *path,
                                bool *gone) {
  struct sockaddr_un sa;
  size_t off = offsetof(struct sockaddr_un, sun_path);
  uint64_t len = (uint32_t)n->data.args[2];
  if (len <= off + 1 || len > sizeof(sa))
    return false;
  memset(&sa, 0, sizeof(sa));
  int rc = sbx_target_read(t, n->data.args[1], &sa, (size_t)len);
  if (rc == -ENOENT)
    *gone = true;
  if (rc < 0 || sa.sun_family != AF_UNIX || sa.sun_path[0] == '\0')
    return false;
  char raw[sizeof(sa.sun_path) + 1];
  memcpy(raw, sa.sun_path, len - off);
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
  const path_call *pc = find_path_call(n.data.nr);
  bool gone = false;
  if (pc) {
    g_autofree char *path = g_malloc(PATH_MAX);
    g_autofree char *path2 = g_malloc(PATH_MAX);
    sbx_unotify_target t;
    sbx_target_init(&t, o->ch.listener, n.id, (pid_t)n.pid);
    if (observe_path(&t, &n, pc->dirfd_arg, pc->path_arg, path, &gone))
      ob.path = path;
    if (pc->path2_arg >= 0 &&
        observe_path(&t, &n, pc->dirfd2_arg, pc->path2_arg, path2, &gone))
      ob.path2 = path2;
    if (pc->flags_arg >= 0) {
      ob.has_open_flags = true;
      ob.open_flags = (uint32_t)n.data.args[pc->flags_arg];
    } else if (pc->flags_arg == -2) {
      struct open_how how;
      if (n.data.args[3] >= sizeof(how) &&
          sbx_target_read(&t, n.data.args[2], &how, sizeof(how)) == 0) {
        ob.has_open_flags = true;
        ob.open_flags = how.flags;
      }
    } else if (n.data.nr == __NR_creat) {
      ob.has_open_flags = true;
      ob.open_flags = O_CREAT | O_WRONLY | O_TRUNC;
    }
    sbx_target_release(&t);
    if (!gone && o->fn)
      o->fn(&ob, o->user_data);
  } else if (n.data.nr == __NR_connect || n.data.nr == __NR_bind) {
    g_autofree char *path = g_malloc(PATH_MAX);
    sbx_unotify_target t;
    sbx_target_init(&t, o->ch.listener, n.id, (pid_t)n.pid);
    if (observe_socket_path(&t, &n, path, &gone))
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
