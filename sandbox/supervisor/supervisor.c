/* The user-notification supervisor: its loop, and the dispatch of each
 * notification to a handler; see supervisor.h.
 *
 * Trusts the resolver's allowlist and the kernel; trusts nothing the
 * target wrote. A call of the table of file-system calls
 * (sandbox/files/fs_calls.h) goes to its operation's handler (fs_ops.c);
 * the few others the supervisor serves (sockets, the inode-flag ioctls)
 * are listed at the end of this file; every other call is refused.
 */
#include "sandbox/supervisor/supervisor.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <linux/fsverity.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sandbox/base/syscalls.h"
#include "sandbox/files/fs_calls.h"
#include "sandbox/kernel/seccomp/bpf.h"
#include "sandbox/kernel/namespaces/status.h"
#include "sandbox/kernel/unotify/notify.h"
#include "sandbox/kernel/unotify/target.h"
#include "sandbox/supervisor/call.h"

struct sbx_unotify {
  sbx_unotify_channel ch;
  sbx_unotify_config cfg;
  bool pending;
  bool first_exec_seen;
  sbx_unotify_stats stats;
  int wait_epoll;     /* the sockets of waiting calls */
  GPtrArray *waiting; /* of sbx_call, ANSWER_WAIT */
  GHashTable *ptys;   /* of GUINT_TO_POINTER(N + 1): see sbx_call_pty_made */
};

/* ---- decisions ---------------------------------------------------------- */

bool sbx_call_first_exec(sbx_call *c) {
  if (!c->cfg->allow_first_exec || c->u->first_exec_seen)
    return false;
  c->u->first_exec_seen = true;
  return true;
}

void sbx_call_pty_made(sbx_call *c, unsigned n) {
  g_hash_table_add(c->u->ptys, GUINT_TO_POINTER(n + 1));
}

bool sbx_call_pty_ours(const sbx_call *c, unsigned n) {
  return g_hash_table_contains(c->u->ptys, GUINT_TO_POINTER(n + 1));
}

/* ---- everything else ---------------------------------------------------- */

/* Calls whose refusal a program expects to read as "not permitted". */
static bool refused_with_eperm(int nr) {
  switch (nr) {
    case __NR_mount:
    case __NR_umount2:
    case __NR_pivot_root:
    case __NR_chroot:
    case __NR_unshare:
    case __NR_setns:
    case __NR_clone:
    case __NR_ptrace:
    case __NR_process_vm_readv:
    case __NR_process_vm_writev:
    case __NR_kcmp:
    case __NR_prctl:
    case __NR_ioctl:
    case __NR_personality:
    case __NR_name_to_handle_at:
    case __NR_open_by_handle_at:
    case __NR_setuid:
    case __NR_setgid:
    case __NR_setreuid:
    case __NR_setregid:
    case __NR_setresuid:
    case __NR_setresgid:
    case __NR_setgroups:
    case __NR_setfsuid:
    case __NR_setfsgid:
    case __NR_capset:
    case __NR_acct:
    case __NR_swapon:
    case __NR_swapoff:
    case __NR_reboot:
    case __NR_sethostname:
    case __NR_setdomainname:
    case __NR_settimeofday:
    case __NR_clock_settime:
    case __NR_adjtimex:
    case __NR_clock_adjtime:
    case __NR_init_module:
    case __NR_finit_module:
    case __NR_delete_module:
    case __NR_kexec_load:
    case __NR_kexec_file_load:
    case __NR_iopl:
    case __NR_ioperm:
    case __NR_bpf:
    case __NR_perf_event_open:
    case __NR_userfaultfd:
    case __NR_keyctl:
    case __NR_add_key:
    case __NR_request_key:
    case __NR_quotactl:
      return true;
    default:
      return false;
  }
}

/* Refused ioctls, named in the message. Compared on the low 32 bits, as
 * the kernel reads the command (S4). */
typedef struct {
  unsigned cmd;
  const char *name;
  bool inode; /* changes a file's inode attributes (S26a) */
} ioctl_info;

static const ioctl_info ioctls[] = {
    {TIOCSTI, "TIOCSTI", false},
    {TIOCLINUX, "TIOCLINUX", false},
    {TIOCSETD, "TIOCSETD", false},
    {FS_IOC_SETFLAGS, "FS_IOC_SETFLAGS", true},
    {FS_IOC32_SETFLAGS, "FS_IOC32_SETFLAGS", true},
    {FS_IOC_SETVERSION, "FS_IOC_SETVERSION", true},
    {FS_IOC32_SETVERSION, "FS_IOC32_SETVERSION", true},
    {FS_IOC_FSSETXATTR, "FS_IOC_FSSETXATTR", true},
    {FS_IOC_SETFSLABEL, "FS_IOC_SETFSLABEL", true},
    {FS_IOC_SET_ENCRYPTION_POLICY, "FS_IOC_SET_ENCRYPTION_POLICY", true},
    {FS_IOC_ENABLE_VERITY, "FS_IOC_ENABLE_VERITY", true},
};

static const ioctl_info *find_ioctl(unsigned cmd) {
  for (size_t i = 0; i < G_N_ELEMENTS(ioctls); i++)
    if (ioctls[i].cmd == cmd)
      return &ioctls[i];
  return NULL;
}

static void h_refuse(sbx_call *c) {
  c->ev.operation = "syscall";
  if (c->n->data.nr == __NR_ioctl) {
    const ioctl_info *info = find_ioctl((unsigned)arg_int(c, 1));
    if (info)
      snprintf(c->detail, sizeof(c->detail), "ioctl %s", info->name);
    else
      snprintf(c->detail, sizeof(c->detail), "ioctl 0x%x",
               (unsigned)arg_int(c, 1));
    c->ev.detail = c->detail;
  }
  if (sbx_syscall_is_tracing(c->n->data.nr)) {
    deny(c, EPERM, "tracing processes needs --allow-ptrace",
         SBX_UNOTIFY_HINT_PTRACE, NULL, false);
    return;
  }
  int err = refused_with_eperm(c->n->data.nr) ? EPERM : ENOSYS;
  deny(c, err, "system call not in the policy", SBX_UNOTIFY_HINT_NONE, NULL,
       false);
}

/* The filter lets every ioctl through but the ones in the table above. */
static void h_ioctl(sbx_call *c) {
  const ioctl_info *info = find_ioctl((unsigned)arg_int(c, 1));
  if (info && info->inode)
    sbx_handle_inode_ioctl(c, info->name);
  else
    h_refuse(c);
}

/* ---- the table ---------------------------------------------------------- */

typedef void (*handler_fn)(sbx_call *c);

typedef struct {
  int nr;
  handler_fn fn;
} handler;

/* What the supervisor serves besides the table of file-system calls. A
 * number in neither is refused (h_refuse). */
static const handler handlers[] = {
    {__NR_ioctl, h_ioctl},
    {__NR_socket, sbx_handle_socket},
    {__NR_socketpair, sbx_handle_socketpair},
    {__NR_connect, sbx_handle_connect},
    {__NR_bind, sbx_handle_bind},
    {__NR_setuid, sbx_handle_identity},
    {__NR_setgid, sbx_handle_identity},
    {__NR_setreuid, sbx_handle_identity},
    {__NR_setregid, sbx_handle_identity},
    {__NR_setresuid, sbx_handle_identity},
    {__NR_setresgid, sbx_handle_identity},
    {__NR_setgroups, sbx_handle_identity},
    {__NR_setfsuid, sbx_handle_identity},
    {__NR_setfsgid, sbx_handle_identity},
};

static void dispatch(sbx_call *c) {
  int nr = c->n->data.nr;
  const sbx_fs_call *row = sbx_fs_call_find(nr);
  if (row && (row->traits & SBX_FS_SUPERVISED)) {
    sbx_handle_fs_call(c, row);
    return;
  }
  for (size_t i = 0; i < G_N_ELEMENTS(handlers); i++) {
    if (handlers[i].nr == nr) {
      handlers[i].fn(c);
      return;
    }
  }
  h_refuse(c);
}

/* ---- stacked layers ------------------------------------------------------ */

/* A refusal of a stacked layer (supervisor.h): answered here, TRUE; or
 * FALSE for the usual dispatch. */
static bool stacked_refusal(sbx_call *c) {
  const sbx_unotify_config *cfg = c->cfg;
  for (size_t i = 0; i < cfg->n_layers; i++) {
    const sbx_unotify_layer *l = &cfg->layers[i];
    uint32_t ret = sbx_bpf_run_checked(l->insns, l->len, &c->n->data, NULL);
    if ((ret & SECCOMP_RET_ACTION_FULL) != SECCOMP_RET_ERRNO)
      continue;
    /* -1 if it cannot be read: then treated as under the stacked layers
     * (refused and reported). */
    int count = sbx_status_seccomp_filters((pid_t)c->n->pid);
    /* The count is the caller's only if the call is still pending. */
    if (sbx_unotify_id_valid(c->u->ch.listener, c->n->id) != 0) {
      c->kind = ANSWER_DROP;
      c->report = false;
      return true;
    }
    /* The baseline's own verdict on the call. */
    uint32_t b =
        sbx_bpf_run_checked(cfg->base, cfg->base_len, &c->n->data, NULL);
    if (count >= 0 && (unsigned)count < cfg->min_filters) {
      uint32_t action = b & SECCOMP_RET_ACTION_FULL;
      if (action == SECCOMP_RET_USER_NOTIF)
        return false;
      c->report = false;
      if (action == SECCOMP_RET_ALLOW || action == SECCOMP_RET_LOG)
        c->kind = ANSWER_CONTINUE;
      else
        answer_error(c, action == SECCOMP_RET_ERRNO
                            ? (int)(b & SECCOMP_RET_DATA)
                            : EPERM);
      return true;
    }
    /* What the baseline refuses by itself (clone3, io_uring: ENOSYS, for
     * the caller to fall back) is not the layer's refusal to report. */
    if ((b & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_ERRNO) {
      c->report = false;
      answer_error(c, (int)(ret & SECCOMP_RET_DATA));
      return true;
    }
    c->ev.operation = "syscall";
    deny(c, (int)(ret & SECCOMP_RET_DATA), l->reason, SBX_UNOTIFY_HINT_NEVER,
         NULL, false);
    return true;
  }
  return false;
}

/* ---- the loop ----------------------------------------------------------- */

/* At most this many calls wait at once (connects in progress); one more
 * is answered EAGAIN, as the kernel does when it runs out of resources. */
#define MAX_WAITING 64

sbx_unotify *sbx_unotify_new(int listener, const sbx_unotify_config *config,
                             GError **error) {
  if (!config || !config->resolver) {
    g_set_error(error, SBX_UNOTIFY_ERROR, SBX_UNOTIFY_ERROR_INVALID,
                "the supervisor needs a resolver");
    if (listener >= 0)
      close(listener);
    return NULL;
  }
  int ep = epoll_create1(EPOLL_CLOEXEC);
  if (ep < 0) {
    int err = errno;
    g_set_error(error, SBX_UNOTIFY_ERROR, SBX_UNOTIFY_ERROR_FAILED,
                "epoll_create1: %s", g_strerror(err));
    if (listener >= 0)
      close(listener);
    return NULL;
  }
  sbx_unotify *u = g_new0(sbx_unotify, 1);
  u->cfg = *config;
  u->wait_epoll = ep;
  u->waiting = g_ptr_array_new();
  u->ptys = g_hash_table_new(NULL, NULL);
  /* The program's terminal is one of its own: /dev/pts/N names it too
   * (ttyname, tty). */
  unsigned own_tty;
  if (config->tty_relayed && config->tty_master >= 0 &&
      ioctl(config->tty_master, TIOCGPTN, &own_tty) == 0)
    g_hash_table_add(u->ptys, GUINT_TO_POINTER(own_tty + 1));
  if (!sbx_unotify_channel_open(&u->ch, listener, error)) {
    close(ep);
    g_ptr_array_free(u->waiting, TRUE);
    g_hash_table_destroy(u->ptys);
    g_free(u);
    return NULL;
  }
  return u;
}

static void free_call(sbx_call *c) {
  if (c->wait_fd >= 0)
    close(c->wait_fd);
  if (c->fifo >= 0)
    close(c->fifo);
  g_free(c);
}

void sbx_unotify_free(sbx_unotify *u) {
  if (!u)
    return;
  for (guint i = 0; i < u->waiting->len; i++)
    free_call(g_ptr_array_index(u->waiting, i));
  g_ptr_array_free(u->waiting, TRUE);
  g_hash_table_destroy(u->ptys);
  close(u->wait_epoll);
  sbx_unotify_channel_close(&u->ch);
  g_free(u);
}

int sbx_unotify_listener(const sbx_unotify *u) {
  return u->ch.listener;
}

int sbx_unotify_waiting_fd(const sbx_unotify *u) {
  return u->wait_epoll;
}

int sbx_unotify_receive(sbx_unotify *u) {
  u->pending = false;
  int rc = sbx_unotify_recv(u->ch.listener, &u->ch.buf);
  if (rc == -ENOENT) {
    u->stats.dropped++;
    return 0;
  }
  if (rc < 0)
    return rc;
  u->stats.received++;
  u->pending = true;
  return 1;
}

const struct seccomp_notif *sbx_unotify_pending(const sbx_unotify *u) {
  return u->pending ? u->ch.buf.req : NULL;
}

static void emit(sbx_unotify *u, sbx_call *c) {
  if (!c->ev.allowed)
    u->stats.denied++;
  if (c->report && u->cfg.on_event)
    u->cfg.on_event(&c->ev, u->cfg.user_data);
}

/* Sends the answer the handler recorded. 0, -ENOENT (target gone), or
 * another -errno. */
static int send_answer(sbx_unotify *u, sbx_call *c) {
  int rc = 0;
  uint64_t id = c->n->id;
  switch (c->kind) {
    case ANSWER_VALUE:
      rc =
          sbx_unotify_reply(u->ch.listener, &u->ch.buf, id, c->value, c->error);
      break;
    case ANSWER_FD:
      rc = sbx_unotify_send_fd(u->ch.listener, id, c->fd, c->fd_flags);
      close(c->fd);
      c->fd = -1;
      if (rc >= 0) {
        rc = 0;
      } else if (rc == -EMFILE) {
        /* The program's descriptor table is full: its call fails as the
         * kernel's own open would. ADDFD left it unanswered. */
        c->ev.error = EMFILE;
        rc = sbx_unotify_reply(u->ch.listener, &u->ch.buf, id, 0, EMFILE);
      }
      break;
    case ANSWER_CONTINUE:
      rc = sbx_unotify_continue(u->ch.listener, &u->ch.buf, id);
      break;
    case ANSWER_WAIT:
    case ANSWER_DROP:
      rc = -ENOENT;
      break;
  }
  return rc;
}

/* Answers c, reports it and frees it. */
static int finish_call(sbx_unotify *u, sbx_call *c) {
  int rc = send_answer(u, c);
  if (rc == -ENOENT) {
    c->ev.served = false;
    u->stats.dropped++;
  } else if (rc == 0) {
    u->stats.answered++;
  }
  emit(u, c);
  free_call(c);
  return rc;
}

static void stop_waiting(sbx_unotify *u, sbx_call *c) {
  epoll_ctl(u->wait_epoll, EPOLL_CTL_DEL, c->wait_fd, NULL);
  g_ptr_array_remove_fast(u->waiting, c);
}

/* Waiting calls whose target went away (killed, or the call interrupted
 * by a signal: a restarted connect is a new notification). */
static void forget_gone(sbx_unotify *u) {
  for (guint i = u->waiting->len; i-- > 0;) {
    sbx_call *c = g_ptr_array_index(u->waiting, i);
    if (!gone(c))
      continue;
    stop_waiting(u, c);
    c->kind = ANSWER_DROP;
    finish_call(u, c);
  }
}

/* Keeps c until its socket is ready (sbx_unotify_finish_waiting). */
static int start_waiting(sbx_unotify *u, sbx_call *c) {
  forget_gone(u);
  struct epoll_event ev = {
      .events = c->wait_kind == WAIT_CONNECT ? EPOLLOUT : EPOLLIN,
      .data.ptr = c};
  if (u->waiting->len >= MAX_WAITING ||
      epoll_ctl(u->wait_epoll, EPOLL_CTL_ADD, c->wait_fd, &ev) < 0) {
    answer_error(c, EAGAIN);
    return finish_call(u, c);
  }
  g_ptr_array_add(u->waiting, c);
  return 0;
}

int sbx_unotify_finish_waiting(sbx_unotify *u) {
  struct epoll_event evs[16];
  int n = epoll_wait(u->wait_epoll, evs, G_N_ELEMENTS(evs), 0);
  if (n < 0)
    return errno == EINTR ? 0 : -errno;
  int result = 0;
  for (int i = 0; i < n; i++) {
    sbx_call *c = evs[i].data.ptr;
    if (gone(c)) {
      c->kind = ANSWER_DROP;
    } else {
      if (c->wait_kind == WAIT_CONNECT)
        sbx_socket_finish(c);
      else
        sbx_fifo_finish(c);
      if (c->kind == ANSWER_WAIT)
        continue;
    }
    stop_waiting(u, c);
    int rc = finish_call(u, c);
    if (rc < 0 && rc != -ENOENT)
      result = rc;
  }
  forget_gone(u);
  return result;
}

void sbx_call_retry_fifo_writers(sbx_call *reader) {
  sbx_unotify *u = reader->u;
  for (guint i = u->waiting->len; i-- > 0;) {
    sbx_call *c = g_ptr_array_index(u->waiting, i);
    if (c->wait_kind != WAIT_FIFO_WRITE)
      continue;
    if (gone(c))
      c->kind = ANSWER_DROP;
    else
      sbx_fifo_finish(c);
    if (c->kind == ANSWER_WAIT)
      continue;
    stop_waiting(u, c);
    finish_call(u, c);
  }
}

int sbx_unotify_answer(sbx_unotify *u) {
  if (!u->pending)
    return -EINVAL;
  u->pending = false;
  sbx_call *c = g_new0(sbx_call, 1);
  /* Copied: the buffer is reused for the reply's bookkeeping. */
  c->notif = *u->ch.buf.req;
  c->n = &c->notif;
  c->u = u;
  c->cfg = &u->cfg;
  c->report = true;
  c->fd = -1;
  c->wait_fd = -1;
  c->fifo = -1;
  c->kind = ANSWER_VALUE;
  c->error = ENOSYS;
  sbx_target_init(&c->t, u->ch.listener, c->n->id, (pid_t)c->n->pid);
  c->ev.pid = (pid_t)c->n->pid;
  c->ev.nr = c->n->data.nr;
  const char *name = sbx_syscall_name(c->n->data.nr);
  if (!name) {
    snprintf(c->name, sizeof(c->name), "syscall-%d", c->n->data.nr);
    name = c->name;
  }
  c->ev.syscall = name;
  c->ev.allowed = true;
  c->ev.served = true;

  if (!stacked_refusal(c))
    dispatch(c);
  sbx_target_release(&c->t);
  if (c->kind == ANSWER_WAIT)
    return start_waiting(u, c);
  return finish_call(u, c);
}

int sbx_unotify_handle_one(sbx_unotify *u) {
  int rc = sbx_unotify_receive(u);
  if (rc <= 0)
    return rc;
  rc = sbx_unotify_answer(u);
  return rc == -ENOENT ? 0 : rc;
}

void sbx_unotify_get_stats(const sbx_unotify *u, sbx_unotify_stats *out) {
  *out = u->stats;
}
